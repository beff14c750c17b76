import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `CardTreeRepository.teamCards` (the choices of a relationships field): the
 * visible, non-top-level cards of a team in (project, ref) order. Without an
 * index it reads and sorts every card of the team; with this partial index it
 * walks the first `limit` entries.
 */
export class CardsTeamCardsIndex1763769600500 implements MigrationInterface {
  name = 'CardsTeamCardsIndex1763769600500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX cards_team_visible_idx ON cards.cards (organization_id, project_id, ref) WHERE depth > 0 AND NOT hidden`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX cards.cards_team_visible_idx`);
  }
}
