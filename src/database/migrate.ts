import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';

/**
 * Applies pending migrations on a connection of their own, without the
 * requests' statement timeout (an upgrade of a big instance may build an
 * index for minutes): the server's start on PostgreSQL and `cardwork migrate`.
 * Returns how many were applied.
 */
export async function applyMigrations(config: AppConfig, embeddedDir?: string): Promise<number> {
  const ds = new DataSource({ ...dataSourceOptions(config, embeddedDir, 'migrations'), migrationsRun: false });
  await ds.initialize();
  try {
    return (await ds.runMigrations({ transaction: 'each' })).length;
  } finally {
    await ds.destroy();
  }
}
