import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../../migrations/index.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { adminQuery, assertTestDatabase, withDatabase } from '../../support/test-db.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

// DATABASE_STATEMENT_TIMEOUT_MS (docs/RELIABILITY.md, "Statements are bounded
// in time"): a request's statement that runs past it is cancelled by
// PostgreSQL and answered 503; migrations are not bound by it. The embedded
// database has no statement timeout: nothing to test there.
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;
if (!serverUrl) console.warn('statement-timeout: skipped, the embedded database applies no statement timeout');

const TIMEOUT_MS = 400;
/** How long the third transaction holds what the request or the migrations need: well past the timeout. */
const HOLD_MS = 3000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

describeWithServer('statement timeout', () => {
  let t: TestApp;
  let u: TestUser;
  let project: ProjectJson;

  beforeAll(async () => {
    t = await createTestApp({ env: { DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) } });
    u = await t.user();
    const ws = workspaceClient(t);
    project = await ws.project(u, await ws.team(u));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 503 SERVICE.BUSY with Retry-After when a statement waits past the timeout for a row lock, and changes nothing', async () => {
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'before' }).expect(201)).body;
    const entries = async () => (await t.http.get(`${API}/cards/${card.id}/stream`).set(as(u)).expect(200)).body.length as number;
    const entriesBefore = await entries();

    // A third transaction holds the card's row for far longer than the timeout.
    const holder = await connect(t.config.databaseUrl!);
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
    const release = sleep(HOLD_MS).then(() => holder.query('ROLLBACK'));
    try {
      const started = Date.now();
      const res = await t.http.put(`${API}/cards/${card.id}`).set(as(u)).send({ title: 'after' });
      const ms = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toMatchObject({ status: 503, type: 'SERVICE.BUSY' });
      expect(res.body.detail).toMatch(/time limit/);
      // Cancelled at the timeout, not run again by the unit of work until the lock went.
      expect(ms).toBeLessThan(HOLD_MS - 500);
    } finally {
      await release;
      await holder.end();
    }

    // Nothing was written, and the pool's connections serve again.
    expect((await t.http.get(`${API}/cards/${card.id}`).set(as(u)).expect(200)).body.title).toBe('before');
    expect(await entries()).toBe(entriesBefore);
    await t.http.put(`${API}/cards/${card.id}`).set(as(u)).send({ title: 'after' }).expect(200);
  });

  it('does not bound a project\'s deletion, which takes as long as the project is big', async () => {
    const ws = workspaceClient(t);
    const doomed = await ws.project(u, await ws.team(u), 'Doomed');
    const card = (await t.http.post(`${API}/cards/${doomed.top_level_card_id}/children`).set(as(u)).send({ title: 'held' }).expect(201)).body;

    // The deletion's cascade waits for this card's row past the timeout, as a
    // big project's cascades run past it.
    const holder = await connect(t.config.databaseUrl!);
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
    const release = sleep(4 * TIMEOUT_MS).then(() => holder.query('ROLLBACK'));
    try {
      const res = await t.http.delete(`${API}/projects/${doomed.id}`).set(as(u));
      expect(res.status).toBe(200);
    } finally {
      await release;
      await holder.end();
    }
    await t.http.get(`${API}/projects/${doomed.id}`).set(as(u)).expect(404);
    await t.http.get(`${API}/cards/${card.id}`).set(as(u)).expect(404);
  });
});

describeWithServer('statement timeout and migrations', () => {
  const name = `cardwork_test_${randomBytes(6).toString('hex')}`;
  let emptyUrl: string;

  beforeAll(async () => {
    assertTestDatabase(name);
    await adminQuery(serverUrl!, `CREATE DATABASE "${name}"`);
    emptyUrl = withDatabase(serverUrl!, name);
  });
  afterAll(async () => {
    await adminQuery(serverUrl!, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  it('applies the migrations at start without the timeout, then bounds the requests', async () => {
    // The first migration's CREATE SCHEMA waits for this uncommitted one (as
    // an upgrade's long index build would run) until it has waited four times
    // the timeout, watched from another connection. (A bound migration would
    // be cancelled at the timeout each time TypeORM's module tries again.)
    const holder = await connect(emptyUrl);
    const watcher = await connect(serverUrl!);
    await holder.query('BEGIN');
    await holder.query('CREATE SCHEMA identity');
    const waitedPastTimeout = (async () => {
      for (const until = Date.now() + 12_000; Date.now() < until; await sleep(50)) {
        const { rows } = await watcher.query(
          `SELECT 1 FROM pg_stat_activity
            WHERE datname = $1 AND wait_event_type = 'Lock' AND query ILIKE 'CREATE SCHEMA%'
              AND now() - query_start > $2 * interval '1 millisecond'`,
          [name, 4 * TIMEOUT_MS],
        );
        if (rows.length) return true;
      }
      return false;
    })();
    const release = waitedPastTimeout.then(() => holder.query('ROLLBACK'));
    let t: TestApp;
    try {
      t = await createTestApp({ databaseUrl: () => emptyUrl, env: { DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) } });
    } finally {
      await release;
      await holder.end();
      await watcher.end();
    }
    expect(await waitedPastTimeout).toBe(true);
    try {
      const ds = t.app.get(DataSource);
      expect(await ds.query('SELECT count(*)::int AS n FROM migrations')).toEqual([{ n: MIGRATIONS.length }]);
      expect(await ds.query('SHOW statement_timeout')).toEqual([{ statement_timeout: `${TIMEOUT_MS}ms` }]);
      const u = await t.user();
      await t.http.get(`${API}/me`).set(as(u)).expect(200);
    } finally {
      await t.close();
    }
  });
});
