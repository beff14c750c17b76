import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source.js';

/** The name the global setup gives the migrated template of this run. */
export const TEMPLATE_ENV = 'CARDWORK_TEST_TEMPLATE';

/** Tests only ever create or drop databases whose name says they are test databases. */
export function assertTestDatabase(name: string): void {
  if (!/test/.test(name)) throw new Error(`refusing to touch database "${name}": its name lacks "test"`);
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Creates and migrates the run's template once; test files race for it under
 * an advisory lock, and the losers find it ready.
 */
async function ensureTemplate(serverUrl: string, template: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (rowCount) return;
    await client.query(`CREATE DATABASE "${template}"`);
    // TypeORM's own quiet logger: the app's (QueryLogger) writes through Nest's
    // static logger, which outside an app prints every migration as a DEBUG line.
    const options = dataSourceOptions(loadConfig({ DATABASE_URL: withDatabase(serverUrl, template), MIGRATIONS_RUN: 'false' }), undefined, 'migrations');
    const ds = new DataSource({ ...options, logging: false, logger: 'advanced-console' });
    await ds.initialize();
    await ds.runMigrations({ transaction: 'each' });
    await ds.destroy();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [template]).catch(() => undefined);
    await client.end();
  }
}

/** A fresh database cloned from the run's migrated template. */
export async function createTestDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = process.env[TEMPLATE_ENV];
  if (!template) throw new Error('the global setup did not name a template database');
  assertTestDatabase(template);
  await ensureTemplate(serverUrl, template);
  const name = `cardwork_test_${randomBytes(6).toString('hex')}`;
  assertTestDatabase(name);
  assertTestDatabase(template);
  await adminQuery(serverUrl, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  return {
    url: withDatabase(serverUrl, name),
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
