import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { deadlocks, deadlocksSince, sendWhileHeld, sendWhileHeldFor } from '../../support/lock-waits.js';
import { itOnPostgres } from '../../support/on-postgres.js';
import { CardHierarchyApi } from '../../../src/modules/card-hierarchy/index.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from '../fields/fields-fixtures.js';

/**
 * Deleting a card deletes the relationship values pointing at it (DESIGN.md
 * §4). A card outside the deleted subtree that held such a value changes:
 * like any change (§9) it gets its stream entry, a `pop` of the lost
 * entries by the deleting user, and its `updated_at` moves, so a client
 * syncing by `updated_at` sees it. Before, the foreign key's cascade removed
 * the values unseen.
 */
describe('deleting a card that relationship values name', () => {
  let t: TestApp, ann: TestUser, c: FieldsClient, w: World;
  let relId: number, otherId: number;

  beforeAll(async () => {
    ({ t, c, ann, w } = await fieldsWorld());
    relId = (await c.field(ann, w.project, 'Rel', 'relationships')).id;
    otherId = (await c.field(ann, w.project, 'Other', 'relationships')).id;
    await c.field(ann, w.project, 'Note', 'text');
  });
  afterAll(() => t.close());

  /** `updated_at` with its microseconds, as the database keeps it. */
  const updatedAt = async (card: number): Promise<string> => {
    const [row] = await t.app.get(DataSource).query(`SELECT updated_at::text AS at FROM cards.cards WHERE id = $1`, [card]);
    return String(row.at);
  };
  const remove = (card: number) => t.http.delete(`${API}/cards/${card}`).set(as(ann)).then((r) => r);
  const entries = async (card: number) => (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed');

  it('records the lost entry on the card that held it and marks that card changed', async () => {
    const b = (await c.card(ann, w.root, 'B')).id;
    const x = (await c.card(ann, w.root, 'X')).id;
    const target = (await c.card(ann, w.root, 'T')).id;
    await c.set(ann, b, 'Rel', [x, target]).expect(200);
    const [at, before] = [await updatedAt(b), (await entries(b)).length];

    expect((await remove(target)).status).toBe(200);

    const card = await c.get(ann, b);
    expect(card.attributes.Rel).toEqual([x]);
    expect(await updatedAt(b)).not.toBe(at);
    expect(Date.parse(card.updated_at)).toBeGreaterThanOrEqual(Date.parse(at));
    const after = await entries(b);
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({
      kind: 'activity',
      user_id: ann.id,
      data: { attribute_id: relId, attribute: 'Rel', type: 'relationships', operation: 'pop', from: [x, target], to: [x], reason: 'target_deleted' },
    });
  });

  it('records one entry per field that lost entries of a deleted subtree, and leaves cards that lost nothing alone', async () => {
    const b = (await c.card(ann, w.root, 'B')).id;
    const bystander = (await c.card(ann, w.root, 'bystander')).id;
    const x = (await c.card(ann, w.root, 'X')).id;
    const top = (await c.card(ann, w.root, 'doomed top')).id;
    const child = (await c.card(ann, top, 'doomed child')).id;
    const grandchild = (await c.card(ann, child, 'doomed grandchild')).id;
    const inside = (await c.card(ann, top, 'doomed, naming its sibling')).id;
    await c.setMany(ann, b, { Rel: [child, x, grandchild], Other: [top] }).expect(200);
    await c.setMany(ann, bystander, { Rel: [x], Note: 'stays' }).expect(200);
    await c.set(ann, inside, 'Rel', [child]).expect(200);
    const [atB, atBystander] = [await updatedAt(b), await updatedAt(bystander)];
    const [entriesB, entriesBystander] = [(await entries(b)).length, (await entries(bystander)).length];

    expect((await remove(top)).status).toBe(200);

    expect((await c.get(ann, b)).attributes).toMatchObject({ Rel: [x], Other: [] });
    expect(await updatedAt(b)).not.toBe(atB);
    const recorded = (await entries(b)).slice(0, (await entries(b)).length - entriesB);
    expect(recorded.map((e) => e.data).sort((p, q) => Number(p.attribute_id) - Number(q.attribute_id))).toEqual([
      { attribute_id: relId, attribute: 'Rel', type: 'relationships', operation: 'pop', from: [child, x, grandchild], to: [x], reason: 'target_deleted' },
      { attribute_id: otherId, attribute: 'Other', type: 'relationships', operation: 'pop', from: [top], to: [], reason: 'target_deleted' },
    ]);
    expect(await updatedAt(bystander)).toBe(atBystander);
    expect(await entries(bystander)).toHaveLength(entriesBystander);
    expect((await t.http.get(`${API}/cards/${inside}`).set(as(ann))).status).toBe(404);
  });

  it('changes the cards that name it in other projects of the team, its parent and its later siblings', async () => {
    const other = await c.project(ann, w.org, 'Elsewhere');
    const link = await c.field(ann, other.project, 'Link', 'relationships');
    const parent = (await c.card(ann, w.root, 'parent')).id;
    const target = (await c.card(ann, parent, 'T')).id;
    const sibling = (await c.card(ann, parent, 'later sibling')).id;
    const far = (await c.card(ann, other.root, 'far')).id;
    await c.set(ann, parent, 'Rel', [target]).expect(200);
    await c.set(ann, sibling, 'Rel', [target]).expect(200);
    await c.set(ann, far, 'Link', [target]).expect(200);
    const at = await Promise.all([parent, sibling, far].map(updatedAt));

    expect((await remove(target)).status).toBe(200);

    for (const [k, card] of [parent, sibling, far].entries()) {
      expect(await updatedAt(card)).not.toBe(at[k]);
      expect((await entries(card))[0].data).toMatchObject({ operation: 'pop', from: [target], to: [], reason: 'target_deleted' });
    }
    expect((await entries(far))[0].data).toMatchObject({ attribute_id: link.id, attribute: 'Link' });
    expect((await c.get(ann, far)).attributes.Link).toEqual([]);
    expect((await c.get(ann, sibling)).position).toBe(0);
  });

  it('leaves the values of an archived card: nothing changes on the cards naming it', async () => {
    const b = (await c.card(ann, w.root, 'B')).id;
    const target = (await c.card(ann, w.root, 'archived T')).id;
    await c.set(ann, b, 'Rel', [target]).expect(200);
    const [at, count] = [await updatedAt(b), (await entries(b)).length];
    await t.http.post(`${API}/cards/${target}/archive`).set(as(ann)).expect(200);
    expect((await c.get(ann, b)).attributes.Rel).toEqual([target]);
    expect(await updatedAt(b)).toBe(at);
    expect(await entries(b)).toHaveLength(count);
  });

  /**
   * The cards naming the subtree are known only once the subtree is held,
   * after the counter row: a value write holding such a card and waiting for
   * a card of the subtree (an append naming it, taken after the card it
   * writes since its id is higher) must not be waited for. The deletion
   * holds the subtree and waits for the counter row a third transaction
   * holds; the append comes in and waits for the subtree's card; the
   * counter row is let go. Waiting for the appending card was a deadlock;
   * taken only if free, the deletion runs again once the append is through,
   * and records what the append added too.
   */
  itOnPostgres('deletes a subtree while a value write on a card naming it waits for a card of it: no deadlock', async () => {
    const b = (await c.card(ann, w.root, 'B')).id;
    const top = (await c.card(ann, w.root, 'doomed top')).id;
    const first = (await c.card(ann, top, 'first')).id;
    const second = (await c.card(ann, top, 'second')).id; // above B: the append takes it after B
    await c.set(ann, b, 'Rel', [first]).expect(200);
    const counter = { sql: `SELECT 1 FROM cards.project_counters WHERE project_id = $1 FOR UPDATE`, params: [w.project] };
    const before = await deadlocks(t.app);

    const [deleted, appended] = await sendWhileHeld(t.app, counter, [
      () => remove(top),
      () => c.append(ann, b, 'Rel', second).then((r) => r),
    ]);

    expect([deleted.status, appended.status]).toEqual([200, 200]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
    expect((await c.get(ann, b)).attributes.Rel).toEqual([]);
    expect((await entries(b))[0].data).toMatchObject({ operation: 'pop', from: [first, second], to: [], reason: 'target_deleted' });
  }, 30_000);

  /**
   * A card naming the subtree held by a write that waits for nothing of the
   * deletion's: tried again until let go, the subtree held all the while
   * (prepared once), not the whole deletion run again at every try.
   */
  itOnPostgres('waits out a card naming the subtree that a write elsewhere holds, holding the subtree meanwhile', async () => {
    const b = (await c.card(ann, w.root, 'B')).id;
    const top = (await c.card(ann, w.root, 'doomed top')).id;
    await c.set(ann, b, 'Rel', [top]).expect(200);
    const held = { sql: `SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, params: [b] };
    const preparations = { on: t.app.get(CardHierarchyApi), method: 'prepareDeletion' };

    const { answer, answeredWhileHeld, calls } = await sendWhileHeldFor(t.app, held, 2_000, () => remove(top), preparations);

    expect([answeredWhileHeld, answer.status, calls]).toEqual([false, 200, 1]);
    expect((await c.get(ann, b)).attributes.Rel).toEqual([]);
    expect((await entries(b))[0].data).toMatchObject({ operation: 'pop', from: [top], to: [], reason: 'target_deleted' });
  }, 30_000);
});
