import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Response } from 'supertest';
import { tokenRequest } from '../../support/oauth-client.js';
import { PgFaultRelay } from '../../support/pg-fault-relay.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { assertTestDatabase } from '../../support/test-db.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

// A database that is there but will not serve (docs/RELIABILITY.md,
// "PostgreSQL outage"): read-only, refusing connections, stalled, or every
// pooled connection in use. Each is a 503 with Retry-After, never a 500 nor a
// request that hangs; /ready says so, except for a busy pool. The faults are
// made on the test's own database (ALTER DATABASE) or by a relay in front of
// the shared server; the embedded database has neither.
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;
if (!serverUrl) console.warn('database-troubles: skipped, it needs a PostgreSQL server (DATABASE_URL)');

/** The requests' statement timeout: a stalled statement is given up 5 s after it (server-pool.ts). */
const TIMEOUT_MS = 1_000;

function expectUnavailable(res: Response, type: string, detail: RegExp): void {
  expect({ status: res.status, type: res.body.type }).toEqual({ status: 503, type });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.headers['retry-after']).toBe('5');
  expect(res.body.detail).toMatch(detail);
}

/** A request's answer and how long it took. */
async function timed(request: PromiseLike<Response>): Promise<{ res: Response; ms: number }> {
  const started = Date.now();
  const res = await request;
  return { res, ms: Date.now() - started };
}

describeWithServer('a database that will not serve', () => {
  let relay: PgFaultRelay;
  let t: TestApp;
  let u: TestUser;
  let project: ProjectJson;
  let admin: pg.Client;
  let database: string;

  beforeAll(async () => {
    relay = await PgFaultRelay.toDatabase(serverUrl!);
    t = await createTestApp({ databaseUrl: (url) => relay.through(url), env: { DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) } });
    u = await t.user();
    const ws = workspaceClient(t);
    project = await ws.project(u, await ws.team(u));
    database = new URL(t.config.databaseUrl!).pathname.slice(1);
    assertTestDatabase(database);
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await relay.set('pass');
    await t.close();
    await relay.close();
    await admin.end();
  });

  const read = () => t.http.get(`${API}/projects/${project.id}/cards`).set(as(u));
  const write = () => t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'new' });
  const ready = () => t.http.get(`${API}/ready`);

  /** Ends the app's sessions (as a failover or an operator does), and waits until they are gone. */
  async function endSessions(): Promise<void> {
    const others = `datname = $1 AND pid <> pg_backend_pid()`;
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${others}`, [database]);
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${others}`, [database]);
      if (rows[0].n === 0) break;
      await sleep(50);
    }
    // The pool learns of each end when its connection's close is read.
    await sleep(300);
  }

  /** The app serves again, soon. */
  async function servesAgain(): Promise<void> {
    let last: Response | undefined;
    for (let i = 0; i < 50; i++) {
      last = await ready();
      if (last.status === 200) break;
      await sleep(100);
    }
    expect(last?.status).toBe(200);
    await read().expect(200);
    await write().expect(201);
  }

  it('answers 503 for reads and writes while the database is read-only (25006), /ready too, and serves once it is writable', async () => {
    await admin.query(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
    await endSessions();
    try {
      expectUnavailable(await read(), 'SERVICE.UNAVAILABLE', /read-only/);
      expectUnavailable(await write(), 'SERVICE.UNAVAILABLE', /read-only/);
      const probe = await ready();
      expect(probe.status).toBe(503);
      expect(probe.body).toMatchObject({ type: 'SERVICE.NOT_READY', detail: expect.stringMatching(/read-only/) });
    } finally {
      await admin.query(`ALTER DATABASE "${database}" RESET default_transaction_read_only`);
      await endSessions();
    }
    await servesAgain();
  });

  it('answers 503 while the database takes no connections (55000), /ready too, and serves once it does', async () => {
    await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
    await endSessions();
    try {
      expectUnavailable(await read(), 'SERVICE.UNAVAILABLE', /not reachable/);
      expectUnavailable(await write(), 'SERVICE.UNAVAILABLE', /not reachable/);
      expect((await ready()).status).toBe(503);
    } finally {
      await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
    }
    await servesAgain();
  });

  it('answers 503 in bounded time while the database is stalled (connections open, no answer), /ready within 2 s, and serves once it answers', async () => {
    // Open connections in the pool and the probe's, which the stall then holds.
    await Promise.all([read().expect(200), read().expect(200), ready().expect(200)]);
    await relay.set('stall');
    try {
      const [onOpen, probe] = await Promise.all([timed(read().timeout(30_000)), timed(ready().timeout(30_000))]);
      expectUnavailable(onOpen.res, 'SERVICE.UNAVAILABLE', /not reachable/);
      // The statement timeout plus 5 s: the deadline of a statement never answered.
      expect(onOpen.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
      expect(onOpen.ms).toBeLessThan(TIMEOUT_MS + 5_000 + 3_000);
      expect(probe.res.status).toBe(503);
      expect(probe.ms).toBeLessThan(3_000);
    } finally {
      await relay.set('pass');
    }
    await servesAgain();
  }, 60_000);

  it('answers the OAuth token and revocation endpoints 503 temporarily_unavailable with Retry-After while the database is away', async () => {
    await relay.set('cut');
    try {
      const client = { client_id: 'cw_unknown', client_secret: 'secret' };
      const token = await tokenRequest(t, { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://app.example/cb', ...client });
      const revoke = await t.http.post('/oauth/revoke').type('form').send({ token: 'x', ...client });
      for (const res of [token, revoke]) {
        expect({ status: res.status, error: res.body.error }).toEqual({ status: 503, error: 'temporarily_unavailable' });
        expect(res.headers['retry-after']).toBe('5');
        expect(res.headers['content-type']).toMatch(/^application\/json/);
      }
    } finally {
      await relay.set('pass');
    }
    await servesAgain();
  });
});

describeWithServer("the readiness probe's kept connection ended between probes", () => {
  let relay: PgFaultRelay;
  let t: TestApp;
  let admin: pg.Client;

  beforeAll(async () => {
    relay = await PgFaultRelay.toDatabase(serverUrl!);
    t = await createTestApp({ databaseUrl: (url) => relay.through(url) });
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
    await admin.end();
  });

  const ready = () => t.http.get(`${API}/ready`);

  it('answers 200 at the next probe after PostgreSQL ended the connection (a restart, a failover, an operator)', async () => {
    await ready().expect(200);
    const database = new URL(t.config.databaseUrl!).pathname.slice(1);
    const probes = `datname = $1 AND query LIKE '%pg_is_in_recovery%' AND pid <> pg_backend_pid()`;
    const { rows } = await admin.query(`SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE ${probes}`, [database]);
    expect(rows).toEqual([{ ended: true }]);
    for (let i = 0; i < 100 && (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE ${probes}`, [database])).rowCount! > 0; i++) await sleep(50);
    // Before, the probe ran on the dead connection: 503 "Client has encountered a connection error and is not queryable".
    await ready().expect(200);
  });

  it('answers 200 at the next probe after the connection was dropped unseen (a proxy or NAT that forgot it)', async () => {
    await ready().expect(200);
    await relay.set('forget');
    // Before, the probe failed on the forgotten connection: 503 "Connection terminated unexpectedly".
    await ready().expect(200);
    await relay.set('pass');
  });
});

describeWithServer('every pooled connection in use', () => {
  let t: TestApp;
  let u: TestUser;
  let project: ProjectJson;

  beforeAll(async () => {
    t = await createTestApp();
    u = await t.user();
    const ws = workspaceClient(t);
    project = await ws.project(u, await ws.team(u));
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503 SERVICE.BUSY "all database connections are busy" with Retry-After, and /ready stays 200', async () => {
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'held' }).expect(201)).body;
    // A third transaction holds the card's row: each update of it holds a pooled connection while it waits.
    const holder = new pg.Client({ connectionString: t.config.databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
    const updates = Array.from({ length: 20 }, (_, i) => t.http.put(`${API}/cards/${card.id}`).set(as(u)).send({ title: `update ${i}` }).then((r) => r));
    try {
      for (let i = 0; i < 200; i++) {
        // A transaction reads pg_stat_activity once: the holder's would never change.
        await holder.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await holder.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (rows[0].n >= 20) break;
        await sleep(50);
      }
      const [busy, probe] = await Promise.all([t.http.get(`${API}/projects/${project.id}/cards`).set(as(u)), t.http.get(`${API}/ready`)]);
      expectUnavailable(busy, 'SERVICE.BUSY', /connections are busy/);
      expect(probe.status).toBe(200);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await Promise.all(updates)).map((r) => r.status)).toEqual(Array(20).fill(200));
  }, 60_000);
});
