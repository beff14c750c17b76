import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Schema of the grouping module (filled in by the grouping issue). */
export class GroupingInit1763769600400 implements MigrationInterface {
  name = 'GroupingInit1763769600400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA grouping`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA grouping CASCADE`);
  }
}
