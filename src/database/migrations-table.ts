import { MIGRATIONS } from '../../migrations/index.js';

/** A statement on one of the start's connections, its rows. */
export type Query = <T>(sql: string) => Promise<T[]>;

/** Where the migrations table is, and whether it exists yet. */
export interface MigrationsTable {
  schema: string;
  present: boolean;
}

const OUR_NAMES = MIGRATIONS.map((M) => new M().name);

/** An identifier quoted for SQL. */
export function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The migrations table's qualified name, for SQL. */
export function qualified(table: MigrationsTable): string {
  return `${quoted(table.schema)}.migrations`;
}

/**
 * Which schema holds the app's migrations table, decided from the database
 * and never from the session's `search_path` alone. TypeORM keeps the table
 * in `current_schema()` unless told, and that moved with the DBA's settings:
 * `search_path = ''` (CVE-2018-1058 hardening) left it no schema ("no schema
 * has been selected to create in" at every start); a role named after one
 * of the app's schemas (`cards`, `identity`, …) found its own schema first
 * once the migrations had created it, and TypeORM replayed every migration
 * into an empty `cards.migrations` (`schema "identity" already exists`, for
 * good). In order:
 *
 * - a `migrations` table that holds this app's migrations and the role may
 *   read: `public`'s, else the current schema's (a deployment whose role had
 *   its own schema first, `search_path = "$user"`, keeps it there), else
 *   another schema's (the first by name). A `public.migrations` without them
 *   (made by the TypeORM CLI run as another role, or another app's) does not
 *   take a deployment away from its own table;
 * - else `public.migrations` when it exists (a start that failed before its
 *   first migration committed);
 * - else (a fresh database) `public`, or the current schema when the role
 *   may create in that one and not in `public` (PostgreSQL 15 grants CREATE
 *   on `public` to the database's owner only).
 *
 * The migrations (migrate.ts), the pending check and the newer-database
 * guard (pending-migrations.ts) and ormconfig.ts all read the table this names.
 */
export async function migrationsTable(query: Query): Promise<MigrationsTable> {
  const [where] = await query<{ in_public: boolean; current: string | null; in_current: boolean; public_usable: boolean; current_usable: boolean }>(
    `SELECT pg_catalog.to_regclass('public.migrations') IS NOT NULL AS in_public,
            pg_catalog.current_schema() AS current,
            pg_catalog.current_schema() IS NOT NULL
              AND pg_catalog.to_regclass(pg_catalog.format('%I.migrations', pg_catalog.current_schema())) IS NOT NULL AS in_current,
            EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public' AND pg_catalog.has_schema_privilege(oid, 'CREATE')) AS public_usable,
            EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = pg_catalog.current_schema() AND pg_catalog.has_schema_privilege(oid, 'CREATE')) AS current_usable`,
  );
  const current = where.current;
  const ours = await schemasHoldingOurs(query);
  const preferred = ['public', ...(current ? [current] : [])].find((schema) => ours.includes(schema)) ?? ours[0];
  if (preferred) return { schema: preferred, present: true };
  if (where.in_public) return { schema: 'public', present: true };
  const ownSchema = current && !where.in_current && where.current_usable && !where.public_usable;
  return { schema: ownSchema ? current : 'public', present: false };
}

/** Schemas, by name, whose `migrations` table the role may read and that holds at least one of this app's migrations. */
async function schemasHoldingOurs(query: Query): Promise<string[]> {
  const tables = await query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = 'migrations' AND c.relkind IN ('r', 'p')
        AND pg_catalog.has_schema_privilege(n.oid, 'USAGE') AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
      ORDER BY n.nspname`,
  );
  const names = OUR_NAMES.map((name) => `'${name.replaceAll("'", "''")}'`).join(', ');
  const holding: string[] = [];
  for (const { schema } of tables) {
    const [{ ours }] = await query<{ ours: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${quoted(schema)}.migrations WHERE name IN (${names})) AS ours`);
    if (ours) holding.push(schema);
  }
  return holding;
}
