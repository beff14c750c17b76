import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { createApp, type CreateAppOptions } from '../../src/app.factory.js';
import { EMBEDDED_MEMORY } from '../../src/database/data-source.js';
import { IdentityAdminApi } from '../../src/modules/identity/index.js';
import { createTestDatabase } from './test-db.js';

export interface TestUser {
  id: number;
  username: string;
  apiKey: string;
}

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  http: TestAgent;
  /** Makes a user with an API key, as `cardwork user create` does. */
  user(name?: string): Promise<TestUser>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Force the embedded PGlite database even when DATABASE_URL is set. */
  embedded?: boolean;
  env?: Record<string, string>;
  /** Rewrites the test database's URL (the outage suite routes it through a relay it controls). */
  databaseUrl?: (url: string) => string;
  /** Observability hooks (a logger writing where the test reads, a metrics registry). */
  observe?: Pick<CreateAppOptions, 'rootLogger' | 'metrics'>;
  /** Lets a test replace a provider (only boundaries we do not own, or fault injection). */
  override?: (app: INestApplication) => void;
}

let counter = 0;

/** Boots the whole app on a fresh database: a clone of the migrated template, or in-memory PGlite. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const serverUrl = options.embedded ? undefined : process.env.DATABASE_URL;
  const db = serverUrl ? await createTestDatabase(serverUrl) : undefined;
  const config = loadConfig({
    ...(db ? { DATABASE_URL: options.databaseUrl ? options.databaseUrl(db.url) : db.url } : {}),
    DATA_DIR: process.env.TEST_DATA_DIR ?? '/tmp/cardwork-test-data',
    // Request logs stay quiet in tests unless LOG_LEVEL asks for them.
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...options.env,
  });
  const app = await createApp(config, { logger: false, embeddedDir: db ? undefined : EMBEDDED_MEMORY, ...options.observe });
  options.override?.(app);
  await app.init();
  const admin = app.get(IdentityAdminApi);
  return {
    app,
    config,
    http: request(app.getHttpServer()),
    async user(name?: string) {
      const username = name ?? `user${++counter}_${Math.random().toString(36).slice(2, 8)}`;
      const created = await admin.createUser({ username, email: `${username}@example.test` });
      const { apiKey } = await admin.createApiKey(created.id);
      return { id: created.id, username, apiKey };
    },
    async close() {
      await app.close();
      await db?.drop();
    },
  };
}

/** The X-Api-Key header of a user. */
export const as = (u: TestUser) => ({ 'X-Api-Key': u.apiKey });
