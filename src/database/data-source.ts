import fs from 'node:fs';
import path from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { poolTypes } from './type-parsers.js';
import { PreparingClient } from '../shared/persistence/prepared-statements.js';
import { embeddedDriver } from './embedded-driver.js';
import { SnakeNamingStrategy } from './snake-naming.strategy.js';

export const EMBEDDED_MEMORY = 'memory://';

/**
 * One definition of the connection for the app, the CLI and ormconfig.ts.
 * No DATABASE_URL → PGlite under DATA_DIR/db (or in memory for tests).
 */
export function dataSourceOptions(config: AppConfig, embeddedDir?: string): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    synchronize: false,
    migrations: MIGRATIONS,
    migrationsRun: config.migrationsRun,
    migrationsTransactionMode: 'each' as const,
    namingStrategy: new SnakeNamingStrategy(),
    // Failed statements are logged unless logs are off (LOG_LEVEL=silent, as in tests).
    logging: config.logLevel === 'silent' ? (false as const) : ['error' as const],
  };
  if (!config.embedded) {
    // Transactions run at the session's default level (UnitOfWork sends no SET
    // TRANSACTION): pin it to READ COMMITTED, whatever the server's setting.
    return {
      ...common,
      url: config.databaseUrl,
      parseInt8: true,
      // A connection attempt to an unreachable database fails after 5 s, so a
      // request gets its 503 instead of waiting (DESIGN.md §10).
      extra: {
        max: 20,
        connectionTimeoutMillis: 5000,
        keepAlive: true,
        options: '-c default_transaction_isolation=read\\ committed',
        types: poolTypes,
        // Statements marked `prepared(…)` go out named: parsed and planned once per connection.
        ...(config.preparedStatements ? { Client: PreparingClient } : {}),
      },
    };
  }
  const dir = embeddedDir ?? path.join(config.dataDir, 'db');
  if (dir !== EMBEDDED_MEMORY) fs.mkdirSync(dir, { recursive: true });
  return { ...common, driver: embeddedDriver(dir === EMBEDDED_MEMORY ? undefined : dir) };
}
