import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Statistics for the filter's scalar comparisons (docs/PERFORMANCE.md
 * "Filters"). `Estimate > 50` compiles to `attribute_id = ANY(…) AND
 * jsonb_typeof(value) = 'number' AND value > …` (the type test is what lets
 * `scalar_values_number_idx` apply). Without statistics on the expression
 * the planner takes `jsonb_typeof(value) = 'number'` for 0.5 % of the rows
 * and, for a field whose values are mostly numbers, underestimates the
 * matches some 300-fold: it then probes every one of them for the page.
 * These statistics (per field: which kinds of value it holds) fix the
 * estimate; ANALYZE fills them.
 */
export class FieldsScalarValuesKindStats1795564940517 implements MigrationInterface {
  name = 'FieldsScalarValuesKindStats1795564940517';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE STATISTICS fields.scalar_values_kind_stats ON attribute_id, (jsonb_typeof(value)) FROM fields.scalar_values`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP STATISTICS IF EXISTS fields.scalar_values_kind_stats`);
  }
}
