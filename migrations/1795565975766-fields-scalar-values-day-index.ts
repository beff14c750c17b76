import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replaces `scalar_values_day_idx` (1763840000100) for `{Due} < -360d`
 * (docs/PERFORMANCE.md "Filters"). That index was partial (string values
 * only), and PostgreSQL keeps no usable statistics on a partial index's
 * expression: the planner took a day range for a third of a field's values,
 * whatever the range, and counted a 0.8 % range by hashing the whole
 * project. This index is on the day of a string value and NULL for any other
 * kind, over all rows, so ANALYZE gathers the days' histogram on it and the
 * filter (which compares the same expression) is estimated from it.
 */
export class FieldsScalarValuesDayIndex1795565975766 implements MigrationInterface {
  name = 'FieldsScalarValuesDayIndex1795565975766';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX scalar_values_string_day_idx ON fields.scalar_values
         (attribute_id, ((CASE WHEN jsonb_typeof(value) = 'string' THEN left(value #>> '{}', 10) END) COLLATE "C"))`,
    );
    await q.query(`DROP INDEX fields.scalar_values_day_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX scalar_values_day_idx ON fields.scalar_values (attribute_id, (left(value #>> '{}', 10) COLLATE "C"))
        WHERE jsonb_typeof(value) = 'string'`,
    );
    await q.query(`DROP INDEX fields.scalar_values_string_day_idx`);
  }
}
