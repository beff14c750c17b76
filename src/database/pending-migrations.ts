import pg from 'pg';
import type { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
import { embeddedDataDir } from './data-source.js';
import { closeEmbedded, openEmbedded, queryEmbedded } from './embedded-driver.js';

type Query = <T>(sql: string) => Promise<T[]>;

/** The names of the migrations the database has applied, oldest first. Read without writing (TypeORM's own read creates its `migrations` table first). */
async function appliedMigrations(query: Query): Promise<string[]> {
  const [{ present }] = await query<{ present: boolean }>(`SELECT to_regclass('public.migrations') IS NOT NULL AS present`);
  return present ? (await query<{ name: string }>(`SELECT name FROM public.migrations ORDER BY id`)).map((r) => r.name) : [];
}

/** Names for a one-line message: the first three, then how many more. */
function listed(names: string[]): string {
  return names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');
}

/**
 * The names of the migrations this build has and the database has not
 * applied, in their order. Read without writing: a server started with
 * MIGRATIONS_RUN=false must not change the schema.
 */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  const applied = new Set(await appliedMigrations((sql) => ds.query(sql)));
  return ds.migrations.map((m) => m.name ?? m.constructor.name).filter((name) => !applied.has(name));
}

/**
 * With MIGRATIONS_RUN=false the server serves only a schema that is up to
 * date: otherwise `/ready` said 200 while every request failed on a missing
 * table (a 500), until someone ran `cardwork migrate`.
 */
export async function refusePendingMigrations(ds: DataSource): Promise<void> {
  const pending = await pendingMigrations(ds);
  if (!pending.length) return;
  throw new Error(
    `${pending.length} migration(s) are not applied to the database and MIGRATIONS_RUN is false: ` +
      `run \`npx cardwork migrate\` first, or start with MIGRATIONS_RUN=true (pending: ${listed(pending)})`,
  );
}

/** The names of this build's migrations, as the migrations table records them. */
const KNOWN = new Set(MIGRATIONS.map((M) => new M().name));

/** A start refused because a newer build migrated the database: its message is the one line printed. */
export class NewerDatabaseError extends Error {}

/**
 * Refuses a database whose migrations table holds migrations this build
 * does not know: a newer build migrated it. An older server on a newer
 * schema did harm (its OAuth code cleanup cascaded through a foreign key a
 * later migration added, deleting live logins); its start, and every CLI
 * command, stop here before anything is written, whatever MIGRATIONS_RUN
 * says. Reads on a connection of its own: on PostgreSQL once (the server's
 * start has waited for the database already), on the embedded database the
 * instance `openEmbedded` opens (the app's data source then uses it).
 */
export async function refuseNewerDatabase(config: AppConfig): Promise<void> {
  await withStartConnection(config, async (query) => {
    const unknown = (await appliedMigrations(query)).filter((name) => !KNOWN.has(name));
    if (!unknown.length) return;
    throw new NewerDatabaseError(
      `the database was migrated by a newer cardwork (migration ${listed(unknown)}): ` +
        `run that version, or revert those migrations with it first (npx typeorm migration:revert -d dist/ormconfig.js, once per migration)`,
    );
  });
}

/** `work` on a connection of the start's own; the embedded database stays open for the app unless `work` fails. */
async function withStartConnection(config: AppConfig, work: (query: Query) => Promise<void>): Promise<void> {
  if (config.embedded) {
    const dir = embeddedDataDir(config);
    await openEmbedded(dir);
    try {
      return await work(queryEmbedded);
    } catch (error) {
      // A CLI command that stops here would otherwise never exit.
      await closeEmbedded(dir);
      throw error;
    }
  }
  const client = new pg.Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(async <R>(sql: string) => (await client.query(sql)).rows as R[]);
  } finally {
    await client.end().catch(() => undefined);
  }
}
