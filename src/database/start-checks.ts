import type { MigrationsTable, Query } from './migrations-table.js';
import { quoted } from './migrations-table.js';

/** A start refused for what the database is or allows: its message is the one line printed, saying what the DBA must do. */
export class UnfitDatabaseError extends Error {}

/**
 * Refuses a fresh PostgreSQL database (no migration applied) whose encoding
 * cannot store every character the API takes (CJK, emoji), before anything
 * is written: such requests answered 400 "A value in the request cannot be
 * stored" on a server that had started silently. SQL_ASCII stores the UTF-8
 * bytes the app sends as they are, and a database that already serves keeps
 * serving after an upgrade: both get a `warn` line instead (databaseWarnings).
 */
export async function refuseEncoding(query: Query, fresh: boolean): Promise<void> {
  const [{ encoding, database }] = await query<{ encoding: string; database: string }>(
    `SELECT pg_catalog.current_setting('server_encoding') AS encoding, pg_catalog.current_database() AS database`,
  );
  if (!fresh || encoding === 'UTF8' || encoding === 'SQL_ASCII') return;
  throw new UnfitDatabaseError(
    `the database ${quoted(database)} is encoded ${encoding}, not UTF8, and cannot store every character cardwork takes (CJK, emoji): ` +
      `create one with ENCODING 'UTF8' (createdb -E UTF8 -T template0 …) and point DATABASE_URL at it`,
  );
}

/**
 * Refuses a start that has migrations to apply where the session cannot:
 * a read-only session (`default_transaction_read_only = on` on the database
 * or role, or a standby), a fresh database the role may not create schemas
 * in, a migrations table it may not create. Each was a stack trace from
 * inside the app's start ("cannot execute CREATE TABLE in a read-only
 * transaction", "permission denied for database …").
 */
export async function refuseUnappliable(query: Query, pending: number, fresh: boolean, table: MigrationsTable): Promise<void> {
  if (!pending) return;
  const [s] = await query<{ read_only: boolean; standby: boolean; database: string; role: string; create_schemas: boolean; create_table: boolean }>(
    `SELECT pg_catalog.current_setting('transaction_read_only') = 'on' AS read_only, pg_catalog.pg_is_in_recovery() AS standby,
            pg_catalog.current_database() AS database, current_user AS role,
            pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE') AS create_schemas,
            EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ${literal(table.schema)} AND pg_catalog.has_schema_privilege(oid, 'CREATE')) AS create_table`,
  );
  const what = `${pending} migration(s) to apply`;
  const database = quoted(s.database);
  const role = quoted(s.role);
  if (s.standby) throw new UnfitDatabaseError(`${what} and the database is a standby (read-only): point DATABASE_URL at the primary`);
  if (s.read_only) {
    throw new UnfitDatabaseError(
      `${what} and the session is read-only (default_transaction_read_only = on): ` +
        `ALTER DATABASE ${database} SET default_transaction_read_only = off (or ALTER ROLE ${role} … if it is the role's), ` +
        `or apply them with \`cardwork migrate\` as a role whose sessions may write`,
    );
  }
  if (fresh && !s.create_schemas) {
    throw new UnfitDatabaseError(
      `${what} and role ${role} may not create schemas in database ${database}: ` +
        `GRANT CREATE ON DATABASE ${database} TO ${role} (or make it the database's owner), or apply them with \`cardwork migrate\` as a role that may`,
    );
  }
  if (!table.present && !s.create_table) {
    throw new UnfitDatabaseError(
      `${what} and role ${role} may not create the migrations table in schema ${quoted(table.schema)}: ` +
        `GRANT CREATE ON SCHEMA ${quoted(table.schema)} TO ${role}, or apply them with \`cardwork migrate\` as a role that may`,
    );
  }
}

/** A text as an SQL literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * What the start says in `warn` lines about a database that serves, less
 * well: case-insensitive names and search that miss non-ASCII letters
 * (LC_CTYPE C), titles searched without their trigram index.
 */
export async function databaseWarnings(query: Query): Promise<string[]> {
  const [s] = await query<{ folds: boolean; ctype: string; encoding: string; trgm_index: boolean }>(
    `SELECT pg_catalog.lower('É') = 'é' AS folds, pg_catalog.current_setting('lc_ctype') AS ctype,
            pg_catalog.current_setting('server_encoding') AS encoding,
            pg_catalog.to_regclass('cards.cards_title_trgm_idx') IS NOT NULL AS trgm_index`,
  );
  const warnings: string[] = [];
  if (s.encoding === 'SQL_ASCII') {
    warnings.push(
      'the database is encoded SQL_ASCII: PostgreSQL keeps the UTF-8 text cardwork sends as bytes, unchecked, and folds ASCII letters only. ' +
        "A database created with ENCODING 'UTF8' (README, \"What the database needs\") checks and folds all of it",
    );
  } else if (s.encoding !== 'UTF8') {
    warnings.push(
      `the database is encoded ${s.encoding}, not UTF8: text it cannot store (CJK, emoji) is refused with a 400. ` +
        "Move to a database created with ENCODING 'UTF8' (pg_dump, then restore into it: the dump converts)",
    );
  }
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
