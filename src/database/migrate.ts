import { setTimeout as delay } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { isDatabaseUnavailable } from '../shared/persistence/database-availability.js';
import { dataSourceOptions } from './data-source.js';

/**
 * A database still starting up (or restarting) is waited for, as long as the
 * request pool's first connection was before migrations moved out of it
 * (TypeOrmModule's retries: 9 more attempts, 3 s apart).
 */
const START_ATTEMPTS = 10;
const START_RETRY_MS = 3_000;

/**
 * Applies pending migrations on a connection of their own, without the
 * requests' statement timeout (an upgrade of a big instance may build an
 * index for minutes): the server's start on PostgreSQL and `cardwork migrate`.
 * Returns how many were applied. On PostgreSQL they run under a session
 * advisory lock: instances started together (a deploy of several, a
 * `cardwork migrate` beside a starting server) apply them one after the
 * other, the later finding none pending. Before, two ran the same migration
 * at once, and one stopped on `CREATE SCHEMA` (duplicate key) and exited.
 * The embedded database has one process (embedded-lock.ts).
 */
export async function applyMigrations(config: AppConfig, embeddedDir?: string, attempts = START_ATTEMPTS): Promise<number> {
  let ds: DataSource;
  for (let n = 1; ; n++) {
    try {
      ds = await new DataSource({ ...dataSourceOptions(config, embeddedDir, 'migrations'), migrationsRun: false }).initialize();
      break;
    } catch (error) {
      if (n >= attempts || !isDatabaseUnavailable(error)) throw error;
      await delay(START_RETRY_MS);
    }
  }
  try {
    if (!config.embedded) await ds.query(`SELECT pg_advisory_lock(hashtextextended('cardwork.migrations', 0))`);
    return (await ds.runMigrations({ transaction: 'each' })).length;
  } finally {
    // Closing the one connection lets the lock go.
    await ds.destroy();
  }
}
