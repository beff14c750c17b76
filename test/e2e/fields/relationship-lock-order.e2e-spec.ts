import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { deadlocks, deadlocksSince, sendWhileHeld } from '../../support/lock-waits.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type AttributeJson, type FieldsClient, type World } from './fields-fixtures.js';
import { describeOnPostgres } from '../../support/on-postgres.js';

/**
 * A relationships value's row holds the card it names FOR KEY SHARE (its
 * foreign key). Taken as the row was written, after the written card's own
 * lock (and, for a new card, after the project's counter row), that lock
 * could wait for a tree write that held the named card in its step 1 and
 * waited for the written card or the counter: a deadlock PostgreSQL broke
 * after deadlock_timeout, and a retry. Each test makes that meeting happen
 * every time, with a third transaction holding a row until both writes
 * wait, and asserts both answers and that pg_stat_database.deadlocks did
 * not move. Each of them deadlocked before the named cards were locked in
 * the lock order (docs/ARCHITECTURE.md, "The one lock order").
 */
// Two transactions at once: the embedded database runs one at a time.
describeOnPostgres('relationship values in the lock order', () => {
  let t: TestApp, ann: TestUser, c: FieldsClient, world: World;
  let related: AttributeJson;

  beforeAll(async () => {
    ({ t, c, ann, w: world } = await fieldsWorld());
    related = await c.field(ann, world.project, 'Related', 'relationships');
  });
  afterAll(() => t.close());

  /**
   * Under one parent: `first`, then `target`, then `written` (ids in that
   * order). Deleting `first` locks the parent, `first`, and the later
   * siblings it shifts, `target` before `written`.
   */
  async function siblings(name: string) {
    const parent = await c.card(ann, world.root, `${name} parent`);
    const first = await c.card(ann, parent.id, `${name} first`);
    const target = await c.card(ann, parent.id, `${name} target`);
    const written = await c.card(ann, parent.id, `${name} written`);
    const elsewhere = await c.card(ann, world.root, `${name} elsewhere`);
    return { parent, first, target, written, elsewhere };
  }

  const deleteCard = (id: number) => t.http.delete(`${API}/cards/${id}`).set(as(ann)).then((r) => r);

  /** `write` and the deletion of `first` meet while `hold` is held; both answer, and no deadlock was broken. */
  async function meet(hold: Parameters<typeof sendWhileHeld>[1], write: () => Promise<{ status: number; body: { id?: number } }>, first: number) {
    const before = await deadlocks(t.app);
    const [written, deleted] = await sendWhileHeld(t.app, hold, [write, () => deleteCard(first)]);
    expect(deleted.status).toBe(200);
    expect(await deadlocksSince(t.app, before)).toBe(0);
    return written;
  }

  it('sets a relationship to an earlier sibling while a deletion shifts both: no deadlock', async () => {
    const { first, target, written, elsewhere } = await siblings('set');
    expect((await c.set(ann, written.id, related.name, [elsewhere.id])).status).toBe(200);
    // The set touches `written`, then waits to replace its list (the held row); the deletion
    // holds `target` and waits for `written`; then the set writes its row naming `target`.
    const held = { sql: `SELECT 1 FROM fields.relationship_values WHERE card_id = $1 FOR UPDATE`, params: [written.id] };
    const set = await meet(held, () => c.set(ann, written.id, related.name, [target.id]).then((r) => r), first.id);
    expect(set.status).toBe(200);
    expect((await c.get(ann, written.id)).attributes.Related).toEqual([target.id]);
    expect((await c.get(ann, target.id)).position).toBe(0);
  }, 30_000);

  it('appends a relationship to an earlier sibling while a deletion shifts both: no deadlock', async () => {
    const { first, target, written } = await siblings('append');
    // A third transaction inserts the very row the append will insert, without its foreign
    // keys' locks (replica role), and rolls back: the append touches `written`, then waits on
    // that row; the deletion holds `target` and waits for `written`; then the append inserts.
    const held = {
      setup: [`SET LOCAL session_replication_role = replica`],
      sql: `INSERT INTO fields.relationship_values (card_id, attribute_id, target_card_id, position) VALUES ($1, $2, $3, 0)`,
      params: [written.id, related.id, target.id],
      end: 'rollback' as const,
    };
    const appended = await meet(held, () => c.append(ann, written.id, related.name, target.id).then((r) => r), first.id);
    expect(appended.status).toBe(200);
    expect((await c.get(ann, written.id)).attributes.Related).toEqual([target.id]);
  }, 30_000);

  it('creates a card related to a card a deletion shifts, both waiting for the counter row: no deadlock', async () => {
    const { first, target, elsewhere } = await siblings('create');
    // The creation holds its parent and waits for the counter row; the deletion holds `target`
    // and waits for it too; the creation gets it first, then writes its value naming `target`
    // (now only if free: it is not, so the creation runs again once the deletion is done).
    const counter = { sql: `SELECT 1 FROM cards.project_counters WHERE project_id = $1 FOR UPDATE`, params: [world.project] };
    const create = () => t.http.post(`${API}/cards/${elsewhere.id}/children`).set(as(ann)).send({ title: 'new', attributes: { Related: [target.id] } });
    const created = await meet(counter, () => create().then((r) => r), first.id);
    expect(created.status).toBe(201);
    expect((await c.get(ann, created.body.id!)).attributes.Related).toEqual([target.id]);
  }, 30_000);

  it('creates a card related to a card a long tree write holds for two seconds: 201 once it is let go, not a 500', async () => {
    const { target, elsewhere } = await siblings('long');
    // Moving or deleting a subtree of 100 000 cards holds its rows for seconds. The creation
    // takes the card it names only if free (NOWAIT), so its unit of work runs again until it
    // is: eight quick attempts used to give up within some 150 ms and answer 500.
    const blocker = t.app.get(DataSource).createQueryRunner();
    await blocker.connect();
    let created: { status: number; body: { id?: number } };
    const started = Date.now();
    try {
      await blocker.startTransaction();
      await blocker.query(`SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, [target.id]);
      const creating = t.http.post(`${API}/cards/${elsewhere.id}/children`).set(as(ann)).send({ title: 'late', attributes: { Related: [target.id] } }).then((r) => r);
      await delay(2_000);
      await blocker.commitTransaction();
      created = await creating;
    } finally {
      await blocker.release();
    }
    expect(created.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect((await c.get(ann, created.body.id!)).attributes.Related).toEqual([target.id]);
  }, 30_000);
});
