import pg from 'pg';
import type { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
import { embeddedDataDir } from './data-source.js';
import { closeEmbedded, openEmbedded, queryEmbedded } from './embedded-driver.js';
import { migrationsTable, qualified, type Query } from './migrations-table.js';
import { refuseEncoding, refuseUnappliable } from './start-checks.js';

/**
 * The migrations the database has applied, oldest first (none when its table does not exist yet), from the
 * table the migrations use (migrationsTable). Read without writing (TypeORM's own read creates its table first).
 */
async function appliedMigrations(query: Query): Promise<Array<{ name: string; timestamp: string }>> {
  const table = await migrationsTable(query);
  return table.present ? query<{ name: string; timestamp: string }>(`SELECT name, timestamp::text AS timestamp FROM ${qualified(table)} ORDER BY id`) : [];
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
  const applied = new Set((await appliedMigrations((sql) => ds.query(sql))).map((m) => m.name));
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

/** The names of this build's migrations, as the migrations table records them, and the newest one's timestamp. */
const KNOWN = new Set(MIGRATIONS.map((M) => new M().name));
const NEWEST = Math.max(...MIGRATIONS.map((M) => Number(new M().name.slice(-13))));

/** A start refused because a newer build migrated the database: its message is the one line printed. */
export class NewerDatabaseError extends Error {}

/**
 * Refuses a fresh PostgreSQL database not encoded in UTF8 (refuseEncoding), then
 * a database that a newer build migrated, then (when `applying`: the start
 * with MIGRATIONS_RUN, `cardwork migrate`) a session that cannot apply the
 * pending migrations (refuseUnappliable). A newer build's migrations table
 * holds a migration this build does not know, dated after this build's
 * newest. An older server on a newer schema did harm (its OAuth code
 * cleanup cascaded through a foreign key a later migration added, deleting
 * live logins); its start, and every CLI command, stop here before anything
 * is written, whatever MIGRATIONS_RUN says. A migration it does not know
 * dated earlier (a hotfix applied by hand, another branch's) is no sign of
 * a newer build, and refusing it would lock out every later build too: the
 * warning returned names it. Reads on a connection of its own: on
 * PostgreSQL once (the server's start has waited for the database already),
 * on the embedded database the instance `openEmbedded` opens (the app's data
 * source then uses it).
 */
export async function refuseNewerDatabase(config: AppConfig, applying = config.migrationsRun): Promise<string | undefined> {
  let warning: string | undefined;
  await withStartConnection(config, async (query) => {
    const applied = await appliedMigrations(query);
    if (!config.embedded) await refuseEncoding(query, !applied.length);
    const unknown = applied.filter((m) => !KNOWN.has(m.name));
    const newer = unknown.filter((m) => Number(m.timestamp) > NEWEST).map((m) => m.name);
    if (newer.length) {
      throw new NewerDatabaseError(
        `the database was migrated by a newer cardwork (migration ${listed(newer)}): ` +
          `run that version, or revert those migrations with it first (npx typeorm migration:revert -d dist/ormconfig.js, once per migration)`,
      );
    }
    if (applying && !config.embedded) {
      const done = new Set(applied.map((m) => m.name));
      await refuseUnappliable(query, [...KNOWN].filter((name) => !done.has(name)).length, !applied.length, await migrationsTable(query));
    }
    if (unknown.length) {
      warning = `the database has applied migration(s) this build does not have, dated before its newest (${listed(unknown.map((m) => m.name))}): started anyway`;
    }
  });
  return warning;
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
