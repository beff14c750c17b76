import type { Query } from './migrations-table.js';
import { quoted } from './migrations-table.js';

/** A start refused for what the database is or allows: its message is the one line printed, saying what the DBA must do. */
export class UnfitDatabaseError extends Error {}

/**
 * Refuses a PostgreSQL database whose encoding is not UTF8, before anything
 * is written: it cannot store every character the API takes (CJK, emoji), and
 * such requests answered 400 "A value in the request cannot be stored" on a
 * server that had started silently.
 */
export async function refuseEncoding(query: Query): Promise<void> {
  const [{ encoding, database }] = await query<{ encoding: string; database: string }>(
    `SELECT pg_catalog.current_setting('server_encoding') AS encoding, pg_catalog.current_database() AS database`,
  );
  if (encoding === 'UTF8') return;
  throw new UnfitDatabaseError(
    `the database ${quoted(database)} is encoded ${encoding}, not UTF8, and cannot store every character cardwork takes (CJK, emoji): ` +
      `create one with ENCODING 'UTF8' (createdb -E UTF8 -T template0 …), restore into it (pg_dump converts), and point DATABASE_URL at it`,
  );
}

/**
 * What the start says in `warn` lines about a database that serves, less
 * well: case-insensitive names and search that miss non-ASCII letters
 * (LC_CTYPE C), titles searched without their trigram index.
 */
export async function databaseWarnings(query: Query): Promise<string[]> {
  const [s] = await query<{ folds: boolean; ctype: string; trgm_index: boolean }>(
    `SELECT pg_catalog.lower('É') = 'é' AS folds, pg_catalog.current_setting('lc_ctype') AS ctype,
            pg_catalog.to_regclass('cards.cards_title_trgm_idx') IS NOT NULL AS trgm_index`,
  );
  const warnings: string[] = [];
  if (!s.folds) {
    warnings.push(
      `the database's LC_CTYPE (${s.ctype}) folds ASCII letters only: case-insensitive names and search miss non-ASCII letters ` +
        `(a title search for ÉLAN misses élan; fields "État" and "état", users Élise@x.com and élise@x.com can both exist). ` +
        `Create the database with LC_CTYPE 'C.UTF-8' (or another UTF-8 locale) or an ICU locale (--locale-provider=icu), TEMPLATE template0, and restore into it`,
    );
  }
  if (!s.trgm_index) {
    warnings.push(
      'cards.cards_title_trgm_idx is missing (pg_trgm was not installed when the migrations ran): title search scans every card of a project. ' +
        'Install pg_trgm (CREATE EXTENSION pg_trgm, in any schema) and create the index: CREATE INDEX cards_title_trgm_idx ON cards.cards USING gin (title <its schema>.gin_trgm_ops)',
    );
  }
  return warnings;
}
