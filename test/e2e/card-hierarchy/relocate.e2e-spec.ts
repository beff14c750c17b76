import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardWorld, expectConsistentTree, type CardClient, type CardJson } from './card-fixtures.js';

describe('relocate', () => {
  let t: TestApp, ann: TestUser, c: CardClient, org: number;
  beforeAll(async () => ({ t, c, ann, team: org } = await cardWorld({ team: 'Moves' })));
  afterAll(() => t.close());

  /** top ─ a ─ a1 ─ a11 ─ a111, a ─ a2; top ─ b ─ b1; top ─ d */
  async function tree() {
    const p = await c.project(ann, org, 'Tree');
    const top = p.top_level_card_id;
    const a = await c.create(ann, top, 'a');
    const a1 = await c.create(ann, a.id, 'a1');
    const a11 = await c.create(ann, a1.id, 'a11');
    const a111 = await c.create(ann, a11.id, 'a111');
    const a2 = await c.create(ann, a.id, 'a2');
    const b = await c.create(ann, top, 'b');
    const b1 = await c.create(ann, b.id, 'b1');
    const d = await c.create(ann, top, 'd');
    return { p, top, a, a1, a11, a111, a2, b, b1, d };
  }

  it('moves a subtree to another parent, last by default, updating the depth of the whole subtree', async () => {
    const { p, a, a1, a11, a111, a2, b, b1 } = await tree();
    const res = await c.relocate(ann, a1.id, { parent_id: b1.id });
    expect(res.body).toMatchObject({ id: a1.id, parent_id: b1.id, depth: 3, position: 0, ref: a1.ref, title: 'a1' });
    expect(await c.get(ann, a11.id)).toMatchObject({ parent_id: a1.id, depth: 4 });
    expect(await c.get(ann, a111.id)).toMatchObject({ parent_id: a11.id, depth: 5 });
    // The old siblings close the gap.
    expect(await c.expectDense(ann, a.id)).toEqual([expect.objectContaining({ id: a2.id, position: 0 })]);

    // Up again, to the second level: last among b's children.
    const up = await c.relocate(ann, a11.id, { parent_id: b.id });
    expect(up.body).toMatchObject({ parent_id: b.id, depth: 2, position: 1 });
    expect(await c.get(ann, a111.id)).toMatchObject({ depth: 3 });
    expect((await c.expectDense(ann, b.id)).map((x) => x.id)).toEqual([b1.id, a11.id]);
    expect(await c.children(ann, a1.id)).toEqual([]);
    await expectConsistentTree(t, ann, p);
  });

  it('moves to a given position among the new siblings, shifting the others', async () => {
    const { p, top, a, b, d, b1 } = await tree();
    const res = await c.relocate(ann, b1.id, { parent_id: top, position: 1 });
    expect(res.body).toMatchObject({ parent_id: top, position: 1, depth: 1 });
    expect((await c.expectDense(ann, top)).map((x) => x.id)).toEqual([a.id, b1.id, b.id, d.id]);
    expect(await c.children(ann, b.id)).toEqual([]);
    // A position past the end means last; 0 means first.
    await c.relocate(ann, a.id, { parent_id: b.id, position: 0 });
    await c.relocate(ann, d.id, { parent_id: b.id, position: 99 });
    expect((await c.expectDense(ann, b.id)).map((x) => x.id)).toEqual([a.id, d.id]);
    expect((await c.expectDense(ann, top)).map((x) => x.id)).toEqual([b1.id, b.id]);
    await expectConsistentTree(t, ann, p);
  });

  it('reorders among the same siblings when parent_id is the current parent', async () => {
    const p = await c.project(ann, org, 'Reorder');
    const top = p.top_level_card_id;
    const k: CardJson[] = [];
    for (let i = 0; i < 5; i++) k.push(await c.create(ann, top, `k${i}`));
    const order = async () => (await c.expectDense(ann, top)).map((x) => x.title);

    expect((await c.relocate(ann, k[4].id, { parent_id: top, position: 1 })).body).toMatchObject({ position: 1, parent_id: top });
    expect(await order()).toEqual(['k0', 'k4', 'k1', 'k2', 'k3']);
    expect((await c.relocate(ann, k[0].id, { parent_id: top, position: 3 })).body.position).toBe(3);
    expect(await order()).toEqual(['k4', 'k1', 'k2', 'k0', 'k3']);
    // Without parent_id the parent stays.
    await c.relocate(ann, k[3].id, { position: 0 });
    expect(await order()).toEqual(['k3', 'k4', 'k1', 'k2', 'k0']);
    await c.relocate(ann, k[3].id, { parent_id: top, position: 100 });
    expect(await order()).toEqual(['k4', 'k1', 'k2', 'k0', 'k3']);
    // Same place: nothing moves.
    await c.relocate(ann, k[1].id, { parent_id: top, position: 1 });
    expect(await order()).toEqual(['k4', 'k1', 'k2', 'k0', 'k3']);
    await expectConsistentTree(t, ann, p);
  });

  it('clamps any integer position to the siblings (DESIGN.md §4): a negative one is first, one past int4 or 1e9 is last', async () => {
    const { p, top, a, b, d, b1 } = await tree();
    expect((await c.relocate(ann, d.id, { position: -5 })).body.position).toBe(0);
    expect((await c.expectDense(ann, top)).map((x) => x.id)).toEqual([d.id, a.id, b.id]);
    expect((await c.relocate(ann, d.id, { position: 99_999_999_999 })).body.position).toBe(2);
    expect((await c.relocate(ann, a.id, { position: Number.MAX_SAFE_INTEGER })).body.position).toBe(2);
    expect((await c.expectDense(ann, top)).map((x) => x.id)).toEqual([b.id, d.id, a.id]);
    // Under a new parent too, as a string (the query or a form).
    expect((await c.relocate(ann, d.id, { parent_id: b.id, position: '-1' })).body).toMatchObject({ parent_id: b.id, position: 0 });
    expect((await c.relocate(ann, a.id, { parent_id: b.id, position: '99999999999' })).body).toMatchObject({ parent_id: b.id, position: 2 });
    expect((await c.expectDense(ann, b.id)).map((x) => x.id)).toEqual([d.id, b1.id, a.id]);
    await expectConsistentTree(t, ann, p);
  });

  it('refuses to move a card under itself or a descendant (409) and changes nothing', async () => {
    const { p, a, a1, a11, a111 } = await tree();
    for (const target of [a, a1, a11, a111]) {
      const res = await c.relocate(ann, a.id, { parent_id: target.id }, 409);
      expect(res.body.type).toBe('CARD.CYCLE_DETECTED');
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    await c.relocate(ann, a1.id, { parent_id: a111.id, position: 0 }, 409);
    expect(await c.get(ann, a.id)).toMatchObject({ parent_id: p.top_level_card_id, depth: 1, position: 0 });
    expect(await c.get(ann, a1.id)).toMatchObject({ parent_id: a.id, depth: 2 });
    await expectConsistentTree(t, ann, p);
  });

  it('refuses a parent in another project, an unknown parent and a bad parent_id (400), changing nothing', async () => {
    const { p, a, a1 } = await tree();
    const other = await c.project(ann, org, 'Other');
    const foreign = await c.create(ann, other.top_level_card_id, 'foreign');
    const before = await c.get(ann, a1.id);
    for (const parent_id of [foreign.id, other.top_level_card_id, 999999999]) {
      const res = await c.relocate(ann, a1.id, { parent_id }, 400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'parent_id' })]);
    }
    for (const body of [
      { parent_id: 'abc' },
      { parent_id: `0${a.id}` },
      { parent_id: -1 },
      { parent_id: 0 },
      { parent_id: 1.5 },
      { parent_id: a.id, position: 'first' },
      { parent_id: a.id, position: '1e20' },
      { parent_id: a.id, position: 1.5 },
      { parent_id: a.id, colour: 'red' },
      { parent_id: a.id, group_id: 1 },
    ]) {
      await c.relocate(ann, a1.id, body, 400);
    }
    expect(await c.get(ann, a1.id)).toEqual(before);
    expect(await c.children(ann, foreign.id)).toEqual([]);
    await expectConsistentTree(t, ann, p);
  });

  it('takes parent_id and position as form fields', async () => {
    const { p, top, a, b, d } = await tree();
    const res = await t.http
      .post(`${API}/cards/${d.id}/relocate`)
      .set(as(ann))
      .type('form')
      .send({ parent_id: String(a.id), position: '1' })
      .expect(200);
    expect(res.body).toMatchObject({ parent_id: a.id, position: 1, depth: 2 });
    await t.http.post(`${API}/cards/${b.id}/relocate`).set(as(ann)).type('form').send({ position: '0' }).expect(200);
    expect((await c.expectDense(ann, top)).map((x) => x.id)).toEqual([b.id, a.id]);
    await t.http.post(`${API}/cards/${b.id}/relocate`).set(as(ann)).type('form').send({ position: 'x' }).expect(400);
    await expectConsistentTree(t, ann, p);
  });

  it('checks a group_id given with a new parent against the card at its new place', async () => {
    const { p, a, a1, b } = await tree();
    const type = await t.http.post(`${API}/projects/${p.id}/group-types`).set(as(ann)).send({ name: 'Column', one_group_per_card: true }).expect(201);
    const atB = await t.http.post(`${API}/cards/${b.id}/groups`).set(as(ann)).send({ type_id: type.body.id, title: 'Under b' }).expect(201);
    const atA = await t.http.post(`${API}/cards/${a.id}/groups`).set(as(ann)).send({ type_id: type.body.id, title: 'Under a' }).expect(201);
    // a1 leaves a for b: a group scoped at b is open to it, one scoped at a no longer is.
    const bad = await c.relocate(ann, a1.id, { parent_id: b.id, group_id: atA.body.id }, 400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'group_id' })]);
    expect(await c.get(ann, a1.id)).toMatchObject({ parent_id: a.id, groups: [] });
    const res = await c.relocate(ann, a1.id, { parent_id: b.id, group_id: atB.body.id, position: 0 });
    expect(res.body).toMatchObject({ parent_id: b.id, depth: 2, groups: [expect.objectContaining({ id: atB.body.id })] });
    // position went to the group column; among b's children the card is last.
    expect((await c.expectDense(ann, b.id)).map((x) => x.id)).toEqual([expect.any(Number), a1.id]);
    await expectConsistentTree(t, ann, p);
  });

  it('answers 404 for an unknown card', async () => {
    const { top } = await tree();
    await c.relocate(ann, 999999999, { parent_id: top }, 404);
  });

  it('moves a card into and out of an archived subtree, keeping the listing right', async () => {
    const { p, a, b, b1 } = await tree();
    await t.http.post(`${API}/cards/${b.id}/archive`).set(as(ann)).expect(200);
    const visibleBefore = await c.listing(ann, p.id);
    expect(visibleBefore.cards.map((x) => x.id)).not.toContain(b1.id);

    // a's subtree (a, a1, a11, a111, a2) disappears from the listing under b.
    await c.relocate(ann, a.id, { parent_id: b1.id });
    const hidden = await c.listing(ann, p.id);
    expect(hidden.total).toBe(visibleBefore.total - 5);
    expect(hidden.cards.map((x) => x.id)).not.toContain(a.id);
    expect((await c.listing(ann, p.id, { with_archived: 'true' })).total).toBe(8);

    // b1 (with a below it) comes back when moved out.
    await c.relocate(ann, b1.id, { parent_id: p.top_level_card_id });
    const back = await c.listing(ann, p.id);
    expect(back.total).toBe(visibleBefore.total + 1);
    expect(back.cards.map((x) => x.id)).toEqual(expect.arrayContaining([a.id, b1.id]));
    expect(back.cards.map((x) => x.id)).not.toContain(b.id);
    await expectConsistentTree(t, ann, p);
  });
});
