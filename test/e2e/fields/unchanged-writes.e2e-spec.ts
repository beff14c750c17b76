import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { type TestApp, type TestUser } from '../../support/test-app.js';
import { fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

/**
 * A write that changes nothing (a value set to what it is, a member appended
 * who is already there) records no stream entry (DESIGN.md §5, §9), and must
 * not mark the card changed either: a filter on `updated` and a client
 * syncing by `updated_at` would see a change that is not there. Both the
 * guarded statement (a scalar set) and the locking path (lists, null) are
 * checked; `updated_at` is read with its microseconds, as the database keeps it.
 */
describe('writes that change nothing', () => {
  let t: TestApp, ann: TestUser, bob: TestUser, c: FieldsClient, world: World;

  beforeAll(async () => {
    ({ t, c, ann, w: world, users: { bob } } = await fieldsWorld({ users: { bob: 'member' } }));
    await c.field(ann, world.project, 'Estimate', 'number');
    await c.field(ann, world.project, 'Note', 'text');
    await c.field(ann, world.project, 'Owners', 'members');
  });
  afterAll(() => t.close());

  const updatedAt = async (card: number): Promise<string> => {
    const [row] = await t.app.get(DataSource).query(`SELECT updated_at::text AS at FROM cards.cards WHERE id = $1`, [card]);
    return String(row.at);
  };
  const entries = async (card: number) => (await c.stream(ann, card)).length;

  /** Runs `write` (which must answer 200) and tells whether it moved the card's `updated_at`, and by how many entries its stream grew. */
  async function effect(card: number, write: () => Promise<{ status: number; body: { updated_at?: string } }>) {
    const [at, count] = [await updatedAt(card), await entries(card)];
    const res = await write();
    expect(res.status).toBe(200);
    const now = await updatedAt(card);
    // A set answers the card: its updated_at is the row's.
    if (res.body.updated_at !== undefined) expect(res.body.updated_at).toBe((await c.get(ann, card)).updated_at);
    return { touched: now !== at, entries: (await entries(card)) - count };
  }

  it('leaves updated_at alone after a scalar set to the current value (the guarded statement), moves it after a real one', async () => {
    const card = (await c.card(ann, world.root, 'scalars')).id;
    expect(await effect(card, () => c.set(ann, card, 'Estimate', 3))).toEqual({ touched: true, entries: 1 });
    expect(await effect(card, () => c.set(ann, card, 'Estimate', 3))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.set(ann, card, 'Estimate', '3'))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.setMany(ann, card, { Estimate: 3, Note: 'x' }))).toEqual({ touched: true, entries: 1 });
    expect(await effect(card, () => c.setMany(bob, card, { Estimate: 3, Note: 'x' }))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.set(ann, card, 'Estimate', 4))).toEqual({ touched: true, entries: 1 });
  });

  it('leaves updated_at alone after a list set to the same list, an append of a member already there or a clear of an empty value (the locking path)', async () => {
    const card = (await c.card(ann, world.root, 'lists')).id;
    expect(await effect(card, () => c.set(ann, card, 'Owners', [ann.id]))).toEqual({ touched: true, entries: 1 });
    expect(await effect(card, () => c.set(ann, card, 'Owners', [ann.id]))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.append(ann, card, 'Owners', ann.id))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.append(ann, card, 'Owners', `@${ann.username}`))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.set(ann, card, 'Note', null))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.setMany(ann, card, { Owners: [ann.id], Note: null }))).toEqual({ touched: false, entries: 0 });
    expect(await effect(card, () => c.append(ann, card, 'Owners', bob.id))).toEqual({ touched: true, entries: 1 });
    expect(await effect(card, () => c.pop(ann, card, 'Owners', { value: bob.id }))).toEqual({ touched: true, entries: 1 });
    expect(await effect(card, () => c.set(ann, card, 'Note', 'text'))).toEqual({ touched: true, entries: 1 });
    expect(await effect(card, () => c.set(ann, card, 'Note', null))).toEqual({ touched: true, entries: 1 });
  });
});
