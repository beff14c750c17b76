import { Test, type TestingModule } from '@nestjs/testing';
import type { Provider } from '@nestjs/common';
import { loadConfig } from '../../src/config/app-config.js';
import { EMBEDDED_MEMORY } from '../../src/database/data-source.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import { EventBus } from '../../src/shared/events/event-bus.js';
import { Sql } from '../../src/shared/persistence/sql.js';
import { UnitOfWork } from '../../src/shared/persistence/unit-of-work.js';
import { SharedModule } from '../../src/shared/shared.module.js';
import { createTestDatabase } from './test-db.js';

export interface TestKernel {
  module: TestingModule;
  uow: UnitOfWork;
  bus: EventBus;
  sql: Sql;
  /** The database URL (a fresh clone of the migrated template), or undefined on embedded PGlite. */
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * The shared kernel (unit of work, event bus, SQL) on a real database, in a
 * TestingModule with the given providers and no HTTP: what integration tests
 * (`*.int-spec.ts`) build on. PostgreSQL when DATABASE_URL is set, else PGlite.
 */
export async function createTestKernel(providers: Provider[] = []): Promise<TestKernel> {
  const serverUrl = process.env.DATABASE_URL;
  const db = serverUrl ? await createTestDatabase(serverUrl) : undefined;
  const config = loadConfig({ ...(db ? { DATABASE_URL: db.url } : {}), DATA_DIR: '/tmp/cardwork-test-data' });
  const module = await Test.createTestingModule({
    imports: [SharedModule.forRoot(config), DatabaseModule.forRoot(db ? undefined : EMBEDDED_MEMORY)],
    providers,
  }).compile();
  await module.init();
  return {
    module,
    uow: module.get(UnitOfWork),
    bus: module.get(EventBus),
    sql: module.get(Sql),
    databaseUrl: db?.url,
    async close() {
      await module.close();
      await db?.drop();
    },
  };
}
