import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import { retryWhileUnavailable, startWait } from './database-wait.js';
import { migrationsTable } from './migrations-table.js';

/**
 * Applies pending migrations on a connection of their own, without the
 * requests' statement timeout (an upgrade of a big instance may build an
 * index for minutes): the server's start on PostgreSQL and `cardwork migrate`.
 * Returns the names of those it applied, in their order. On PostgreSQL they run under a session
 * advisory lock: instances started together (a deploy of several, a
 * `cardwork migrate` beside a starting server) apply them one after the
 * other, the later finding none pending. Before, two ran the same migration
 * at once, and one stopped on `CREATE SCHEMA` (duplicate key) and exited.
 * The embedded database has one process (embedded-lock.ts). A database
 * still starting up is waited for (DATABASE_START_WAIT_MS; the server's
 * start has waited for it already, waitForDatabase), unless `once`.
 */
export async function applyMigrations(config: AppConfig, embeddedDir?: string, once = false): Promise<string[]> {
  const ds = await retryWhileUnavailable(
    () => new DataSource({ ...dataSourceOptions(config, embeddedDir, 'migrations'), migrationsRun: false }).initialize(),
    startWait(once ? 0 : config.databaseStartWaitMs),
  );
  try {
    if (!config.embedded) {
      await takeMigrationsLock(ds);
      // TypeORM would keep its table in current_schema(), which the DBA's search_path moves (migrations-table.ts).
      ds.setOptions({ schema: (await migrationsTable((sql) => ds.query(sql))).schema });
    }
    return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
  } finally {
    // Closing the one connection lets the lock go.
    await ds.destroy();
  }
}

const MIGRATIONS_LOCK = `hashtextextended('cardwork.migrations', 0)`;

/**
 * The migrations' advisory lock, waited for as long as its holder keeps it:
 * another instance applying them (or a `cardwork migrate`). The wait says so
 * in one `warn` line when the lock is not free at once; it was silent, and a
 * start stuck behind a holder that froze looked like a hang. (A holder
 * frozen inside a migration's transaction lets go after
 * DATABASE_STATEMENT_TIMEOUT_MS, idle_in_transaction_session_timeout.)
 */
async function takeMigrationsLock(ds: DataSource): Promise<void> {
  const [{ taken }] = await ds.query(`SELECT pg_try_advisory_lock(${MIGRATIONS_LOCK}) AS taken`);
  if (taken) return;
  new Logger('Database').warn("waiting for another instance's migrations (the migrations' advisory lock is held)");
  await ds.query(`SELECT pg_advisory_lock(${MIGRATIONS_LOCK})`);
}
