import { spawn } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { adminQuery, assertTestDatabase, createTestDatabase, withDatabase } from '../../support/test-db.js';
import { as, createTestApp } from '../../support/test-app.js';
import { TcpRelay } from '../../support/tcp-relay.js';
import { API } from '../../support/workspace-client.js';

// A server started before its database (containers started together, a
// PostgreSQL restart during a deploy) waits for it. Its own file: an app
// booted beside another in one process takes over passport's strategies,
// which are global, so the suites do not share a process with other apps.
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithServer('start-up before the database', () => {
  it('waits for a database still coming up, applies pending migrations on it, then serves', async () => {
    const relay = await TcpRelay.toDatabase(serverUrl!);
    await relay.cut();
    try {
      // The migrations run on a connection of their own before the request pool
      // opens; the first attempts are refused, as by a PostgreSQL not yet listening.
      const starting = createTestApp({ databaseUrl: (url) => relay.through(url) });
      await sleep(1500);
      await relay.restore();
      const app = await starting;
      try {
        expect((await app.http.get(`${API}/ready`)).status).toBe(200);
        const user = await app.user();
        expect((await app.http.get(`${API}/me`).set(as(user))).status).toBe(200);
      } finally {
        await app.close();
      }
    } finally {
      await relay.close();
    }
  }, 60_000);

  /**
   * Instances started together on a new database (a deploy of several, or
   * `cardwork migrate` beside a starting server) apply the migrations one
   * after the other. Before, two ran the same migration at once and one
   * stopped on `CREATE SCHEMA` (duplicate key) and exited with an error.
   */
  it('applies the migrations once when three `cardwork migrate` run at once on an empty database', async () => {
    const name = `cardwork_test_${randomBytes(6).toString('hex')}`;
    assertTestDatabase(name);
    await adminQuery(serverUrl!, `CREATE DATABASE "${name}"`);
    try {
      const env = { PATH: process.env.PATH ?? '', DATABASE_URL: withDatabase(serverUrl!, name), LOG_LEVEL: 'warn' };
      const runs = await Promise.all([1, 2, 3].map(() => migrate(env)));
      // One that found the lock taken says so in one warn line (waitsForTheLock below), nothing else.
      expect(runs.map((r) => ({ code: r.code, stderr: r.stderr.split('\n').filter((l) => l && !l.includes(WAITING)) }))).toEqual(
        [1, 2, 3].map(() => ({ code: 0, stderr: [] })),
      );
      const applied = runs.map((r) => (JSON.parse(r.stdout) as { applied: number }).applied).sort((a, b) => b - a);
      expect(applied[0]).toBeGreaterThan(20);
      expect(applied.slice(1)).toEqual([0, 0]);
    } finally {
      await adminQuery(serverUrl!, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  }, 120_000);

  /**
   * One waiting for another's migrations says so, once, when the lock is not
   * free at once; it was silent, and a start stuck behind a holder that froze
   * looked like a hang.
   */
  it('logs one warn line while it waits for the migrations\' lock another holds, and none when it is free', async () => {
    const db = await createTestDatabase(serverUrl!);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      const env = { PATH: process.env.PATH ?? '', DATABASE_URL: db.url, LOG_LEVEL: 'warn' };
      await holder.query(`SELECT pg_advisory_lock(hashtextextended('cardwork.migrations', 0))`);
      let stderr = '';
      const run = migrate(env, (chunk) => (stderr += chunk));
      for (let i = 0; i < 300 && !stderr.includes(WAITING); i++) await sleep(50);
      const lines = stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0])).toMatchObject({ level: 40, msg: expect.stringContaining(WAITING) });
      await sleep(300);
      await holder.query(`SELECT pg_advisory_unlock(hashtextextended('cardwork.migrations', 0))`);
      const waited = await run;
      expect(waited.code).toBe(0);
      expect(waited.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      const free = await migrate(env);
      expect({ code: free.code, stderr: free.stderr }).toEqual({ code: 0, stderr: '' });
    } finally {
      await holder.end();
      await db.drop();
    }
  }, 60_000);
});

const WAITING = "waiting for another instance's migrations";

/** `cardwork migrate` as an operator runs it (the built CLI), its exit code and output. */
function migrate(env: Record<string, string>, onStderr?: (chunk: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = path.resolve(import.meta.dirname, '../../../bin/cardwork.js');
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [cli, 'migrate'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c) => (stdout += c));
    proc.stderr.on('data', (c) => {
      stderr += c;
      onStderr?.(String(c));
    });
    proc.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
