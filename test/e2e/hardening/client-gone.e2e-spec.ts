import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { untilWaitingForLocks } from '../../support/lock-waits.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

// A request whose client closes its connection stops its database work
// (docs/RELIABILITY.md, "A request whose client left stops its statements"):
// its running statement is cancelled and nothing it began is written. Each
// request here waits for a lock a third transaction holds, so it is surely
// still running when its client leaves. The embedded database runs one
// statement at a time and cancels none: nothing to test there.
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;
if (!serverUrl) console.warn('client-gone: skipped, the embedded database does not cancel statements');

/** How long the third transaction holds its lock: far longer than a cancelled request lasts. */
const HOLD_MS = 8000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithServer('a request whose client went away', () => {
  let t: TestApp;
  let u: TestUser;
  let project: ProjectJson;
  let base: string;
  let server: Server;

  beforeAll(async () => {
    t = await createTestApp();
    u = await t.user();
    const ws = workspaceClient(t);
    project = await ws.project(u, await ws.team(u));
    server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Sessions of the test's database waiting for a lock. */
  const lockWaiters = async () => {
    const [row] = await t.app.get(DataSource).query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    return Number(row.n);
  };
  /** Polls until no session waits for a lock, up to `ms`; the count then. */
  const untilNoLockWaiters = async (ms: number) => {
    for (const until = Date.now() + ms; Date.now() < until && (await lockWaiters()) > 0; ) await sleep(50);
    return lockWaiters();
  };

  /** A third transaction holding `sql` until `release` is called (or HOLD_MS passed). */
  async function hold(sql: string, params: unknown[] = []) {
    const holder = new pg.Client({ connectionString: t.config.databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(sql, params);
    let released: Promise<unknown> | undefined;
    const release = () => (released ??= holder.query('ROLLBACK').finally(() => holder.end()));
    const timer = setTimeout(release, HOLD_MS);
    return async () => {
      clearTimeout(timer);
      await release();
    };
  }

  /** Sends a request whose client gives up once it waits for a lock; resolves when the fetch has failed. */
  async function sendAndLeave(path: string, init: RequestInit = {}): Promise<void> {
    const client = new AbortController();
    const sent = fetch(`${base}${API}${path}`, { ...init, headers: { ...as(u), 'Content-Type': 'application/json' }, signal: client.signal }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    await untilWaitingForLocks(t.app, 1);
    client.abort();
    expect(await sent).toBe('AbortError');
  }

  it('cancels a read that waits for the database, so it no longer holds a connection', async () => {
    const release = await hold('LOCK TABLE cards.cards IN ACCESS EXCLUSIVE MODE');
    try {
      await sendAndLeave(`/projects/${project.id}/cards?filter=${encodeURIComponent('title ~ "x"')}`);
      // Cancelled at once, not when the lock goes (or at the statement timeout, a minute away).
      expect(await untilNoLockWaiters(3000)).toBe(0);
    } finally {
      await release();
    }
    // The cancelled statement's connection serves the next requests.
    for (let i = 0; i < 3; i++) await t.http.get(`${API}/projects/${project.id}/cards`).set(as(u)).expect(200);
  });

  it('cancels a write that waits for a row, and writes nothing of it', async () => {
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'before' }).expect(201)).body;
    const entries = async () => (await t.http.get(`${API}/cards/${card.id}/stream`).set(as(u)).expect(200)).body.length as number;
    const entriesBefore = await entries();

    const release = await hold('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
    try {
      await sendAndLeave(`/cards/${card.id}`, { method: 'PUT', body: JSON.stringify({ title: 'after' }) });
      expect(await untilNoLockWaiters(3000)).toBe(0);
    } finally {
      await release();
    }
    // Had the write only lost its client, it would have gone on once the row was free.
    await sleep(500);
    expect((await t.http.get(`${API}/cards/${card.id}`).set(as(u)).expect(200)).body.title).toBe('before');
    expect(await entries()).toBe(entriesBefore);
    await t.http.put(`${API}/cards/${card.id}`).set(as(u)).send({ title: 'after' }).expect(200);
  });

  it('leaves the requests of clients that stay alone', async () => {
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'shared' }).expect(201)).body;
    const release = await hold('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
    let staying: Promise<{ status: number; title?: string }>;
    try {
      // One client waits for the row and stays; a second waits for it too and leaves.
      staying = fetch(`${base}${API}/cards/${card.id}`, {
        method: 'PUT',
        headers: { ...as(u), 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'kept' }),
      }).then(async (res) => ({ status: res.status, title: ((await res.json()) as { title?: string }).title }));
      await untilWaitingForLocks(t.app, 1);
      const leaving = new AbortController();
      const left = fetch(`${base}${API}/cards/${card.id}`, {
        method: 'PUT',
        headers: { ...as(u), 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'dropped' }),
        signal: leaving.signal,
      }).catch((error: Error) => error.name);
      await untilWaitingForLocks(t.app, 2);
      leaving.abort();
      expect(await left).toBe('AbortError');
      // Only the leaving request's statement was cancelled: one still waits.
      for (const until = Date.now() + 3000; Date.now() < until && (await lockWaiters()) > 1; ) await sleep(50);
      expect(await lockWaiters()).toBe(1);
    } finally {
      await release();
    }
    expect(await staying).toEqual({ status: 200, title: 'kept' });
    expect((await t.http.get(`${API}/cards/${card.id}`).set(as(u)).expect(200)).body.title).toBe('kept');
  });
});
