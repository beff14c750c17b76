import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';
import { itOnPostgres } from '../../support/on-postgres.js';

/** Values and definitions under concurrent requests: nothing lost, names stay unique. */
describe('fields under concurrency', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser, w: World;
  let users: TestUser[];

  beforeAll(async () => {
    ({ t, c, ann, w } = await fieldsWorld());
    users = [];
    for (let i = 0; i < 10; i++) {
      const u = await t.user();
      await c.addMember(ann, w.org, u, 'member');
      users.push(u);
    }
    await c.field(ann, w.project, 'Owners', 'members');
    await c.field(ann, w.project, 'Votes', 'likes');
    await c.field(ann, w.project, 'Docs', 'files');
    await c.field(ann, w.project, 'Estimate', 'number');
  });
  afterAll(() => t.close());

  it('keeps every member appended at once, and every vote cast at once', async () => {
    const card = (await c.card(ann, w.root, 'busy')).id;
    const results = await Promise.all([
      ...users.map((u) => c.append(ann, card, 'Owners', u.id)),
      ...users.map((u, i) => c.set(u, card, 'Votes', i % 2 ? 1 : -1)),
    ]);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const json = await c.get(ann, card);
    expect([...(json.attributes.Owners as number[])].sort((a, b) => a - b)).toEqual(users.map((u) => u.id).sort((a, b) => a - b));
    expect(json.attributes.Votes).toEqual({ score: 0, votes: Object.fromEntries(users.map((u, i) => [String(u.id), i % 2 ? 1 : -1])) });
    const changes = (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed');
    expect(changes).toHaveLength(20);
  });

  it('records concurrent sets of one number as one chain: each change starts from the value the one before wrote', async () => {
    const card = (await c.card(ann, w.root, 'raced estimate')).id;
    const results = await Promise.all(users.map((u, i) => c.set(u, card, 'Estimate', i + 1)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const changes = (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed').reverse();
    expect(changes).toHaveLength(users.length);
    expect(changes[0].data.from).toBeNull();
    for (let i = 1; i < changes.length; i++) expect(changes[i].data.from).toBe(changes[i - 1].data.to);
    expect((await c.get(ann, card)).attributes.Estimate).toBe(changes[changes.length - 1].data.to);
  });

  // The guarded write (CardHierarchyApi.touchCurrent) reads the value it
  // replaces in its statement's snapshot. A writer whose transaction holds the
  // card when that statement comes commits after the snapshot was taken: the
  // statement must then touch nothing, and the set must read the value that
  // writer left. Without the row-version guard, the entry's `from` is 3.
  itOnPostgres('starts a value’s entry from what a writer holding the card committed while the set waited for it', async () => {
    const card = (await c.card(ann, w.root, 'held')).id;
    await c.set(ann, card, 'Estimate', 3).expect(200);
    const db = t.app.get(DataSource);
    const holder = db.createQueryRunner();
    await holder.connect();
    try {
      await holder.startTransaction();
      await holder.query(`UPDATE cards.cards SET updated_at = now() WHERE id = $1`, [card]);
      await holder.query(
        `UPDATE fields.scalar_values SET value = '5' WHERE card_id = $1 AND attribute_id = (SELECT id FROM fields.attributes WHERE name = 'Estimate' AND project_id = $2)`,
        [card, w.project],
      );
      const pending = c.set(ann, card, 'Estimate', 8).then((r) => r);
      // Wait until the guarded statement waits for the holder's row lock.
      for (let i = 0; ; i++) {
        const waiting = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH seen%'`);
        if (waiting[0].n > 0) break;
        if (i > 500) throw new Error('the guarded statement never waited for the card');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await holder.commitTransaction();
      expect((await pending).status).toBe(200);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    const changes = (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed');
    expect(changes.map((e) => [e.data.from, e.data.to])).toEqual([
      [5, 8],
      [null, 3],
    ]);
    expect((await c.get(ann, card)).attributes.Estimate).toBe(8);
  });

  it('appends files at once without losing one', async () => {
    const card = (await c.card(ann, w.root, 'files')).id;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => c.append(ann, card, 'Docs', { name: `${i}.txt`, data: String(i) })),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const names = ((await c.get(ann, card)).attributes.Docs as Array<{ name: string }>).map((f) => f.name).sort();
    expect(names).toEqual(Array.from({ length: 8 }, (_, i) => `${i}.txt`));
  });

  it('lets one of many same-named fields be created at once; the others get 409', async () => {
    const model = (await t.http.post(`${API}/projects/${w.project}/models`).set(as(ann)).send({ name: 'Racing' }).expect(201)).body;
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => t.http.post(`${API}/projects/${w.project}/attributes`).set(as(ann)).send({ name: 'Race', type: 'text' })),
      ...Array.from({ length: 5 }, () => t.http.post(`${API}/models/${model.id}/attributes`).set(as(ann)).send({ name: 'race', type: 'number' })),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('answers a rename or an option change racing the field’s deletion with 200 or 404, never a 500', async () => {
    for (let round = 0; round < 12; round++) {
      const type = round % 2 ? 'date' : 'text';
      const field = (await t.http.post(`${API}/projects/${w.project}/attributes`).set(as(ann)).send({ name: `Doomed ${round}`, type }).expect(201)).body;
      const change = type === 'date' ? { options: { time: true } } : { name: `Renamed ${round}` };
      const [put, del] = await Promise.all([
        t.http.put(`${API}/attributes/${field.id}`).set(as(ann)).send(change),
        t.http.delete(`${API}/attributes/${field.id}`).set(as(ann)),
      ]);
      expect(del.status).toBe(200);
      expect([200, 404]).toContain(put.status);
      if (put.status === 404) expect(put.headers['content-type']).toMatch(/problem\+json/);
      await t.http.get(`${API}/attributes/${field.id}`).set(as(ann)).expect(404);
    }
  });

  // Writes to one card queue on its row (CardHierarchyApi.touch) and names on a
  // per-project advisory lock, so none of the above needed a deadlock and a retry.
  itOnPostgres('needed no deadlock along the way', async () => {
    const [row] = await t.app.get(DataSource).query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`);
    expect(Number(row.deadlocks)).toBe(0);
  });
});
