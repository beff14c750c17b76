import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import { retryWhileUnavailable, startWait } from './database-wait.js';

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
    if (!config.embedded) await ds.query(`SELECT pg_advisory_lock(hashtextextended('cardwork.migrations', 0))`);
    return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
  } finally {
    // Closing the one connection lets the lock go.
    await ds.destroy();
  }
}
