import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Schema of the fields module (filled in by the fields issue). */
export class FieldsInit1763769600300 implements MigrationInterface {
  name = 'FieldsInit1763769600300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA fields`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA fields CASCADE`);
  }
}
