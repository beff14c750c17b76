import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `cards_title_trgm_idx` where FilterIndexes1763840000100 could not build
 * it because pg_trgm lives in a schema not on the search_path (managed
 * PostgreSQL services install extensions in `extensions`): its
 * `gin_trgm_ops` was not found, and the failure was swallowed with the
 * missing extension's, so titles were scanned, silently. The operator class
 * is qualified here with the schema the extension is installed in. A
 * database that has the index, or has no pg_trgm (the embedded one), is left
 * as it is; the start warns while the index is missing (start-checks.ts).
 * Title search needs nothing else from pg_trgm: its ILIKE is PostgreSQL's
 * own operator, and the index serves it through the operator class. A role
 * that may not use the extension's schema gets no index (and the start's
 * warning), as FilterIndexes1763840000100 left it: this migration failing
 * would stop every start of an upgraded server.
 */
export class CardsTitleTrgmIndexAnySchema1795700000000 implements MigrationInterface {
  name = 'CardsTitleTrgmIndexAnySchema1795700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$
      DECLARE
        home text;
      BEGIN
        IF pg_catalog.to_regclass('cards.cards_title_trgm_idx') IS NOT NULL THEN
          RETURN;
        END IF;
        SELECT n.nspname INTO home FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
        -- A role without USAGE on the extension's schema cannot name its
        -- operator class: no index (the start warns), never a migration that
        -- fails at every start.
        IF home IS NULL OR NOT pg_catalog.has_schema_privilege(home, 'USAGE') THEN
          RETURN;
        END IF;
        BEGIN
          EXECUTE pg_catalog.format('CREATE INDEX cards_title_trgm_idx ON cards.cards USING gin (title %I.gin_trgm_ops)', home);
        EXCEPTION WHEN insufficient_privilege OR undefined_object THEN
          RAISE WARNING 'cards_title_trgm_idx not built: %', SQLERRM;
        END;
      END
      $$`);
  }

  /** Nothing: where the index exists, FilterIndexes1763840000100 may have built it, and reverting this one must not take it away. */
  async down(): Promise<void> {}
}
