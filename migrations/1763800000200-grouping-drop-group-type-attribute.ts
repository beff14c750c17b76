import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Fields owns the link between a group type and its field (attributes.group_type_id); grouping no longer stores it back. */
export class GroupingDropGroupTypeAttribute1763800000200 implements MigrationInterface {
  name = 'GroupingDropGroupTypeAttribute1763800000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE grouping.group_types DROP COLUMN attribute_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE grouping.group_types ADD COLUMN attribute_id bigint`);
    await q.query(`
      UPDATE grouping.group_types t SET attribute_id = a.id
        FROM fields.attributes a WHERE a.group_type_id = t.id`);
    await q.query(`ALTER TABLE grouping.group_types ALTER COLUMN attribute_id SET NOT NULL`);
  }
}
