import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The cards a listing leaves out, per project: the top-level card and the
 * archived ones (docs/PERFORMANCE.md "Filters", issue 10, fifth pass). A
 * filter whose matches come from field values or group memberships is
 * counted as those cards minus the ones listed here, which is usually a
 * handful, instead of probing the card table once per match. The
 * complement of `cards_project_visible_idx`.
 */
export class CardsUnlistedIndex1795610000000 implements MigrationInterface {
  name = 'CardsUnlistedIndex1795610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX cards_project_unlisted_idx ON cards.cards (project_id, id) WHERE depth = 0 OR hidden`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS cards.cards_project_unlisted_idx`);
  }
}
