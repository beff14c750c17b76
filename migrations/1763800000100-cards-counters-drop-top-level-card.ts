import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Workspace owns a project's link to its top-level card; the counters row no longer repeats it. */
export class CardsCountersDropTopLevelCard1763800000100 implements MigrationInterface {
  name = 'CardsCountersDropTopLevelCard1763800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE cards.project_counters DROP COLUMN top_level_card_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE cards.project_counters ADD COLUMN top_level_card_id bigint`);
    await q.query(`
      UPDATE cards.project_counters c SET top_level_card_id = k.id
        FROM cards.cards k WHERE k.project_id = c.project_id AND k.parent_id IS NULL`);
    await q.query(`ALTER TABLE cards.project_counters ALTER COLUMN top_level_card_id SET NOT NULL`);
  }
}
