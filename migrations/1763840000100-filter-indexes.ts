import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the filter language (docs/FILTERS.md, figures in
 * docs/PERFORMANCE.md "Filters"):
 *
 * - `scalar_values_number_idx`: `Estimate >= 3` reads the range of one
 *   field's numbers instead of probing every card. Partial (numbers only):
 *   text values can be far longer than a btree entry may be, and the filter's
 *   number predicate repeats `jsonb_typeof(value) = 'number'`, so it applies.
 * - `scalar_values_day_idx`: the same for dates (`{Due} < today`), on the
 *   first 10 characters of string values (the day of a date).
 * - `cards_title_trgm_idx`: words and `title ~=` (ILIKE '%…%') through
 *   trigrams. pg_trgm ships with PostgreSQL's contrib; where it cannot be
 *   installed (the embedded database) the index is skipped and titles are
 *   scanned: same results, slower on large projects.
 */
export class FilterIndexes1763840000100 implements MigrationInterface {
  name = 'FilterIndexes1763840000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX scalar_values_number_idx ON fields.scalar_values (attribute_id, value) WHERE jsonb_typeof(value) = 'number'`,
    );
    await q.query(
      `CREATE INDEX scalar_values_day_idx ON fields.scalar_values (attribute_id, (left(value #>> '{}', 10) COLLATE "C"))
        WHERE jsonb_typeof(value) = 'string'`,
    );
    await q.query(`
      DO $$
      BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX cards_title_trgm_idx ON cards.cards USING gin (title gin_trgm_ops);
      EXCEPTION WHEN others THEN
        RAISE NOTICE 'pg_trgm is not available (%): titles are searched without an index', SQLERRM;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS cards.cards_title_trgm_idx`);
    await q.query(`DROP INDEX IF EXISTS fields.scalar_values_day_idx`);
    await q.query(`DROP INDEX IF EXISTS fields.scalar_values_number_idx`);
  }
}
