import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { untilWaitingForLocks } from '../../support/lock-waits.js';
import { itOnPostgres } from '../../support/on-postgres.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardWorld, type CardClient, type ProjectJson } from './card-fixtures.js';

/**
 * What a client syncing by `updated_at` relies on (docs/card-tree.md, "What
 * updated_at says"): a write that changes nothing leaves it, and a write
 * that waited for a lock is stamped after the wait, not when its
 * transaction began, so it does not commit with a time older than changes
 * the client has already read. Times are compared in the database, with
 * their microseconds.
 */
describe('updated_at', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson, root: number;

  beforeAll(async () => {
    ({ t, c, ann, project, root } = await cardWorld({ team: 'Acme', project: 'Sync' }));
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
  });
  afterAll(() => t.close());

  const db = () => t.app.get(DataSource);
  const updatedAt = async (card: number): Promise<string> => String((await db().query(`SELECT updated_at::text AS at FROM cards.cards WHERE id = $1`, [card]))[0].at);

  describe('a write that changes nothing', () => {
    /** Runs `write` (200) and answers whether the card's JSON, its `updated_at` and its stream stayed as they were. */
    async function unchanged(card: number, write: () => Promise<{ status: number; body: unknown }>) {
      const [json, at, stream] = [await c.get(ann, card), await updatedAt(card), await c.stream(ann, card)];
      const res = await write();
      expect(res.status).toBe(200);
      return { answer: res.body === undefined || JSON.stringify(res.body) === JSON.stringify(json), at: (await updatedAt(card)) === at, stream: (await c.stream(ann, card)).length === stream.length };
    }
    const same = { answer: true, at: true, stream: true };
    const put = (card: number, body: Record<string, unknown>) => () => t.http.put(`${API}/cards/${card}`).set(as(ann)).send(body).then((r) => r);
    const state = (card: number, value: string) => () => t.http.post(`${API}/cards/${card}/state`).set(as(ann)).send({ state: value }).then((r) => r);

    it('leaves updated_at after a title or a state set to what it is, and moves it after a real change', async () => {
      const card = (await c.create(ann, root, 'Same')).id;
      expect(await unchanged(card, put(card, { title: 'Same' }))).toEqual(same);
      expect(await unchanged(card, state(card, 'undecided'))).toEqual(same);
      expect(await unchanged(card, put(card, { title: 'Same', state: 'undecided' }))).toEqual(same);
      const renamed = await unchanged(card, put(card, { title: 'Renamed', state: 'undecided' }));
      expect(renamed).toEqual({ answer: false, at: false, stream: false });
      expect(await unchanged(card, state(card, 'accepted'))).toEqual({ answer: false, at: false, stream: false });
      expect(await unchanged(card, state(card, 'accepted'))).toEqual(same);
    });
  });

  describe('a write that waited for a lock', () => {
    /**
     * Holds `held` FOR UPDATE in a transaction of its own until `write` waits
     * for it, notes the database's time, lets go, and answers whether the
     * card `stamped` (the written card, or the one created) got an
     * `updated_at` (and a `created_at`) after that time.
     */
    async function stampedAfterTheWait(held: number, write: () => Promise<{ status: number; body: { id?: number } }>, stamped?: number) {
      const blocker = db().createQueryRunner();
      await blocker.connect();
      let released: string;
      let sent: Promise<{ status: number; body: { id?: number } }>;
      try {
        await blocker.startTransaction();
        await blocker.query(`SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, [held]);
        sent = write();
        await untilWaitingForLocks(t.app, 1);
        // The write's transaction (or its one statement) began before this.
        released = String((await blocker.query(`SELECT clock_timestamp()::text AS at`))[0].at);
      } finally {
        await blocker.commitTransaction().catch(() => undefined);
        await blocker.release();
      }
      const res = await sent;
      expect([200, 201]).toContain(res.status);
      const card = stamped ?? res.body.id!;
      const [row] = await db().query(`SELECT updated_at > $2::timestamptz AS updated, created_at > $2::timestamptz AS created FROM cards.cards WHERE id = $1`, [card, released]);
      return { updated: row.updated as boolean, created: row.created as boolean };
    }

    itOnPostgres('is stamped after the wait: a title, a state, a value, a reorder, an archive', async () => {
      const card = (await c.create(ann, root, 'waits')).id;
      await c.create(ann, root, 'a sibling');
      const writes = [
        () => t.http.put(`${API}/cards/${card}`).set(as(ann)).send({ title: 'after the wait' }).then((r) => r),
        () => t.http.post(`${API}/cards/${card}/state`).set(as(ann)).send({ state: 'completed' }).then((r) => r),
        () => t.http.post(`${API}/cards/${card}/attributes/Estimate`).set(as(ann)).send({ value: 5 }).then((r) => r),
        () => t.http.post(`${API}/cards/${card}/relocate`).set(as(ann)).send({ position: 0 }).then((r) => r),
        () => t.http.post(`${API}/cards/${card}/archive`).set(as(ann)).then((r) => r),
      ];
      for (const write of writes) expect((await stampedAfterTheWait(card, write, card)).updated).toBe(true);
    }, 30_000);

    itOnPostgres('is stamped after the wait: a card created under a parent another write holds', async () => {
      const parent = (await c.create(ann, root, 'held parent')).id;
      const created = () => t.http.post(`${API}/cards/${parent}/children`).set(as(ann)).send({ title: 'after the wait' }).then((r) => r);
      expect(await stampedAfterTheWait(parent, created)).toEqual({ updated: true, created: true });
      const withValue = () =>
        t.http.post(`${API}/cards/${parent}/children`).set(as(ann)).send({ title: 'with a value', attributes: { Estimate: 2 } }).then((r) => r);
      expect(await stampedAfterTheWait(parent, withValue)).toEqual({ updated: true, created: true });
    }, 30_000);
  });
});
