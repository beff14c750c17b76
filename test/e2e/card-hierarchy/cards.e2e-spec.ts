import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardHierarchyApi } from '../../../src/modules/card-hierarchy/index.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardWorld, expectConsistentTree, type CardClient, type CardJson, type ProjectJson } from './card-fixtures.js';

const actionsOf = (entries: { action: string }[]) => entries.map((e) => e.action);

const STATES = ['undecided', 'dropped', 'accepted', 'in_progress', 'waiting', 'completed', 'closed'];

describe('cards: create, read, update, state', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson, top: number;
  beforeAll(async () => ({ t, c, ann, project, root: top } = await cardWorld({ team: 'Acme', project: 'Roadmap' })));
  afterAll(() => t.close());

  it('gives a project a top-level card with ref 0 and depth 0', async () => {
    expect(top).toEqual(expect.any(Number));
    const root = await c.get(ann, top);
    expect(root).toMatchObject({
      id: top,
      ref: 0,
      depth: 0,
      parent_id: null,
      project_id: project.id,
      state: 'undecided',
      is_archived: false,
      position: 0,
    });
    expect(await c.children(ann, top)).toEqual([]);
  });

  it('creates a child with the card JSON of DESIGN §4', async () => {
    const before = Date.now();
    const res = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'First' }).expect(201);
    const card = res.body as CardJson;
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(card).toEqual({
      id: expect.any(Number),
      ref: 1,
      project_id: project.id,
      parent_id: top,
      title: 'First',
      state: 'undecided',
      is_archived: false,
      position: 0,
      depth: 1,
      model_id: null,
      attributes: {},
      groups: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    });
    expect(Date.parse(card.created_at)).toBeGreaterThan(before - 60_000);
    expect(await c.get(ann, card.id)).toEqual(card);
  });

  it('numbers refs per project 1, 2, 3… and puts new cards last among siblings', async () => {
    const org = await c.team(ann, 'Refs');
    const p = await c.project(ann, org, 'Refs');
    const a = await c.create(ann, p.top_level_card_id, 'a');
    const b = await c.create(ann, p.top_level_card_id, 'b');
    const a1 = await c.create(ann, a.id, 'a1');
    const d = await c.create(ann, p.top_level_card_id, 'd');
    expect([a.ref, b.ref, a1.ref, d.ref]).toEqual([1, 2, 3, 4]);
    expect([a.position, b.position, d.position]).toEqual([0, 1, 2]);
    expect(a1).toMatchObject({ position: 0, depth: 2, parent_id: a.id });
    // Another project counts on its own.
    const other = await c.project(ann, org, 'Other');
    expect((await c.create(ann, other.top_level_card_id, 'x')).ref).toBe(1);
  });

  it('never reuses a ref after deletion', async () => {
    const org = await c.team(ann, 'NoReuse');
    const p = await c.project(ann, org, 'P');
    const one = await c.create(ann, p.top_level_card_id, '1');
    const two = await c.create(ann, p.top_level_card_id, '2');
    const three = await c.create(ann, two.id, '3');
    expect([one.ref, two.ref, three.ref]).toEqual([1, 2, 3]);
    await t.http.delete(`${API}/cards/${two.id}`).set(as(ann)).expect(200);
    expect((await c.create(ann, p.top_level_card_id, '4')).ref).toBe(4);
  });

  it('lists children in position order', async () => {
    const parent = await c.create(ann, top, 'parent');
    const kids = [];
    for (const title of ['k0', 'k1', 'k2', 'k3']) kids.push(await c.create(ann, parent.id, title));
    const listed = await c.expectDense(ann, parent.id);
    expect(listed.map((k) => k.title)).toEqual(['k0', 'k1', 'k2', 'k3']);
    expect(listed.every((k) => k.depth === 2)).toBe(true);
    // After a reorder the order follows positions, not ids.
    await c.relocate(ann, kids[3].id, { position: 0 });
    expect((await c.children(ann, parent.id)).map((k) => k.title)).toEqual(['k3', 'k0', 'k1', 'k2']);
  });

  it('refuses bad attributes or group_id on creation as a whole: 400 naming the property, nothing created', async () => {
    // attributes and group_id belong to the fields and grouping modules; a value
    // they refuse must roll the whole creation back, the ref included.
    const parent = await c.create(ann, top, 'no extras');
    const before = await c.listing(ann, project.id);
    for (const body of [
      { title: 'x', attributes: { 'No such field': 3 } },
      { title: 'x', group_id: 999999999 },
      { title: 'x', group_id: 'abc' },
    ]) {
      const res = await t.http.post(`${API}/cards/${parent.id}/children`).set(as(ann)).send(body).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const field = 'attributes' in body ? 'attributes' : 'group_id';
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(new RegExp(`^${field}`)) })]));
    }
    expect(await c.children(ann, parent.id)).toEqual([]);
    const after = await c.listing(ann, project.id);
    expect(after.total).toBe(before.total);
    // The refused requests took no ref.
    const next = await c.create(ann, parent.id, 'after');
    expect(next.ref).toBe(Math.max(...after.cards.map((x) => x.ref)) + 1);
    expect(actionsOf(await c.stream(ann, parent.id))).toEqual(['card.created']);
  });

  it.each([
    ['no title', {}],
    ['an empty title', { title: '' }],
    ['a blank title', { title: '   ' }],
    ['a number as title', { title: 42 }],
    ['a null title', { title: null }],
    ['a title over 1024 characters', { title: 't'.repeat(1025) }],
    ['an unknown property', { title: 'ok', colour: 'red' }],
    ['attributes that are not an object', { title: 'ok', attributes: 'x' }],
  ])('refuses creation with %s (400, nothing created)', async (_label, body) => {
    const parent = await c.create(ann, top, 'bad input parent');
    const res = await t.http.post(`${API}/cards/${parent.id}/children`).set(as(ann)).send(body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(400);
    expect(await c.children(ann, parent.id)).toEqual([]);
  });

  it('accepts a title of exactly 1024 characters', async () => {
    const card = await c.create(ann, top, 'é'.repeat(1024));
    expect(card.title).toHaveLength(1024);
  });

  it('answers 404 for an unknown or malformed card id', async () => {
    await t.http.get(`${API}/cards/999999999`).set(as(ann)).expect(404);
    await t.http.get(`${API}/cards/abc`).set(as(ann)).expect(404);
    await t.http.get(`${API}/cards/999999999/children`).set(as(ann)).expect(404);
    await t.http.post(`${API}/cards/999999999/children`).set(as(ann)).send({ title: 'x' }).expect(404);
    await t.http.put(`${API}/cards/999999999`).set(as(ann)).send({ title: 'x' }).expect(404);
    await t.http.post(`${API}/cards/999999999/state`).set(as(ann)).send({ state: 'closed' }).expect(404);
    await t.http.post(`${API}/cards/999999999/archive`).set(as(ann)).expect(404);
    await t.http.delete(`${API}/cards/999999999/archive`).set(as(ann)).expect(404);
    await t.http.delete(`${API}/cards/999999999`).set(as(ann)).expect(404);
    await t.http.post(`${API}/cards/999999999/relocate`).set(as(ann)).send({ parent_id: top }).expect(404);
    await t.http.get(`${API}/cards/999999999/stream`).set(as(ann)).expect(404);
    await t.http.post(`${API}/cards/999999999/comments`).set(as(ann)).send({ content: 'x' }).expect(404);
  });

  it('updates the title and/or the state with PUT', async () => {
    const card = await c.create(ann, top, 'old');
    await new Promise((r) => setTimeout(r, 5));
    const titled = (await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ title: 'new' }).expect(200)).body as CardJson;
    expect(titled).toMatchObject({ id: card.id, title: 'new', state: 'undecided', ref: card.ref, position: card.position });
    expect(Date.parse(titled.updated_at)).toBeGreaterThan(Date.parse(card.updated_at));
    expect(titled.created_at).toBe(card.created_at);

    const stated = (await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ state: 'in_progress' }).expect(200)).body;
    expect(stated).toMatchObject({ title: 'new', state: 'in_progress' });

    const both = (await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ title: 'both', state: 'waiting' }).expect(200)).body;
    expect(both).toMatchObject({ title: 'both', state: 'waiting' });
    expect(await c.get(ann, card.id)).toMatchObject({ title: 'both', state: 'waiting' });
  });

  it('accepts each of the seven states, by PUT and by POST /state', async () => {
    const card = await c.create(ann, top, 'states');
    for (const state of STATES) {
      const res = await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ state }).expect(200);
      expect(res.body.state).toBe(state);
    }
    for (const state of [...STATES].reverse()) {
      const res = await t.http.post(`${API}/cards/${card.id}/state`).set(as(ann)).send({ state }).expect(200);
      expect(res.body).toMatchObject({ id: card.id, state });
      expect((await c.get(ann, card.id)).state).toBe(state);
    }
  });

  it.each([
    ['an unknown state', { state: 'done' }],
    ['a state in the wrong case', { state: 'Closed' }],
    ['a number as state', { state: 3 }],
    ['a null state', { state: null }],
    ['an empty body', {}],
    ['an empty title', { title: '' }],
    ['a blank title', { title: '  ' }],
    ['a number as title', { title: 5 }],
    ['a title over 1024 characters', { title: 'x'.repeat(1025) }],
    ['an unknown property', { title: 'fine', colour: 'red' }],
    ['a good title with a bad state', { title: 'fine', state: 'nope' }],
    ['a parent_id (not updatable by PUT)', { parent_id: 1 }],
  ])('refuses PUT with %s (400, card unchanged)', async (_label, body) => {
    const card = await c.create(ann, top, 'unchanged');
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ state: 'accepted' }).expect(200);
    const before = await c.get(ann, card.id);
    const res = await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send(body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors?.length).toBeGreaterThan(0);
    expect(await c.get(ann, card.id)).toEqual(before);
  });

  it.each([
    ['an unknown state', { state: 'done' }],
    ['no state', {}],
    ['a number', { state: 1 }],
    ['an array', { state: ['closed'] }],
    ['an extra property', { state: 'closed', title: 'x' }],
  ])('refuses POST /state with %s (400, card unchanged)', async (_label, body) => {
    const card = await c.create(ann, top, 'state unchanged');
    const before = await c.get(ann, card.id);
    await t.http.post(`${API}/cards/${card.id}/state`).set(as(ann)).send(body).expect(400);
    expect(await c.get(ann, card.id)).toEqual(before);
  });

  it('takes form fields as well as JSON', async () => {
    const card = (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).type('form').send({ title: 'from a form' }).expect(201))
      .body as CardJson;
    expect(card.title).toBe('from a form');
    const res = await t.http.post(`${API}/cards/${card.id}/state`).set(as(ann)).type('form').send({ state: 'closed' }).expect(200);
    expect(res.body.state).toBe('closed');
  });

  it('keeps the tree consistent after all of the above', async () => {
    await expectConsistentTree(t, ann, project);
  });
});

describe('cards: archive, restore, delete', () => {
  let t: TestApp, ann: TestUser, c: CardClient, org: number;
  beforeAll(async () => ({ t, c, ann, team: org } = await cardWorld({ team: 'Archive' })));
  afterAll(() => t.close());

  const ids = (cards: CardJson[]) => cards.map((x) => x.id).sort((a, b) => a - b);

  it('archives a card: 200 with the card, hides it and its subtree from the listing', async () => {
    const p = await c.project(ann, org, 'A');
    const a = await c.create(ann, p.top_level_card_id, 'a');
    const a1 = await c.create(ann, a.id, 'a1');
    const a11 = await c.create(ann, a1.id, 'a11');
    const b = await c.create(ann, p.top_level_card_id, 'b');
    expect((await c.listing(ann, p.id)).total).toBe(4);

    const res = await t.http.post(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    expect(res.body).toMatchObject({ id: a.id, is_archived: true, title: 'a', parent_id: p.top_level_card_id, ref: a.ref });
    expect(res.body).toHaveProperty('attributes');

    const visible = await c.listing(ann, p.id);
    expect(ids(visible.cards)).toEqual([b.id]);
    expect(visible.total).toBe(1);
    const all = await c.listing(ann, p.id, { with_archived: 'true' });
    expect(ids(all.cards)).toEqual(ids([a, a1, a11, b]));
    expect(all.total).toBe(4);
    expect((await c.listing(ann, p.id, { with_archived: 'false' })).total).toBe(1);

    // Archived cards stay readable directly; only the archived one is flagged.
    expect((await c.get(ann, a.id)).is_archived).toBe(true);
    expect((await c.get(ann, a1.id)).is_archived).toBe(false);
    expect((await c.children(ann, a.id)).map((x) => x.id)).toEqual([a1.id]);

    // GET /children is a listing too: without with_archived it leaves out the
    // archived card and everything under it; only_ids gives the ids.
    const children = async (id: number, query: Record<string, string>) =>
      (await t.http.get(`${API}/cards/${id}/children`).query(query).set(as(ann)).expect(200)).body as Array<CardJson | number>;
    expect(await children(p.top_level_card_id, { only_ids: 'true' })).toEqual([b.id]);
    expect(await children(p.top_level_card_id, { only_ids: 'true', with_archived: 'true' })).toEqual([a.id, b.id]);
    expect(await children(a.id, {})).toEqual([]);
    expect(await children(a1.id, { with_archived: '1', only_ids: '1' })).toEqual([a11.id]);
    const shown = (await children(p.top_level_card_id, { with_archived: 'true' })) as CardJson[];
    expect(shown.map((x) => [x.id, x.is_archived, x.position])).toEqual([
      [a.id, true, 0],
      [b.id, false, 1],
    ]);
    for (const query of [{ with_archived: 'maybe' }, { only_ids: 'yes' }, { page: '2' }]) {
      const refused = await t.http.get(`${API}/cards/${a.id}/children`).query(query).set(as(ann)).expect(400);
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    }

    // A card created under an archived subtree is hidden too.
    const a12 = await c.create(ann, a1.id, 'a12');
    expect(ids((await c.listing(ann, p.id)).cards)).toEqual([b.id]);
    expect((await c.listing(ann, p.id, { with_archived: 'true' })).total).toBe(5);

    const restored = await t.http.delete(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    expect(restored.body).toMatchObject({ id: a.id, is_archived: false });
    const back = await c.listing(ann, p.id);
    expect(ids(back.cards)).toEqual(ids([a, a1, a11, a12, b]));
    expect(back.total).toBe(5);
  });

  it('keeps an inner archived card hidden when its archived ancestor is restored', async () => {
    const p = await c.project(ann, org, 'Nested');
    const a = await c.create(ann, p.top_level_card_id, 'a');
    const inner = await c.create(ann, a.id, 'inner');
    const innerChild = await c.create(ann, inner.id, 'inner child');
    const sibling = await c.create(ann, a.id, 'sibling');

    await t.http.post(`${API}/cards/${inner.id}/archive`).set(as(ann)).expect(200);
    expect(ids((await c.listing(ann, p.id)).cards)).toEqual(ids([a, sibling]));
    await t.http.post(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    expect((await c.listing(ann, p.id)).total).toBe(0);
    expect((await c.listing(ann, p.id)).cards).toEqual([]);

    await t.http.delete(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    const after = await c.listing(ann, p.id);
    expect(ids(after.cards)).toEqual(ids([a, sibling]));
    expect(after.total).toBe(2);
    expect((await c.get(ann, inner.id)).is_archived).toBe(true);

    await t.http.delete(`${API}/cards/${inner.id}/archive`).set(as(ann)).expect(200);
    const all = await c.listing(ann, p.id);
    expect(ids(all.cards)).toEqual(ids([a, inner, innerChild, sibling]));
    expect(all.total).toBe(4);
  });

  it('treats archiving an archived card and restoring an active one as no change', async () => {
    const p = await c.project(ann, org, 'Idempotent');
    const a = await c.create(ann, p.top_level_card_id, 'a');
    await t.http.post(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    const again = await t.http.post(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    expect(again.body.is_archived).toBe(true);
    expect((await c.listing(ann, p.id)).total).toBe(0);
    await t.http.delete(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    const twice = await t.http.delete(`${API}/cards/${a.id}/archive`).set(as(ann)).expect(200);
    expect(twice.body.is_archived).toBe(false);
    expect((await c.listing(ann, p.id)).total).toBe(1);
    expect((await c.listing(ann, p.id, { with_archived: 'true' })).total).toBe(1);
  });

  it('refuses to archive, restore, delete or relocate the top-level card (409)', async () => {
    const p = await c.project(ann, org, 'Top');
    const a = await c.create(ann, p.top_level_card_id, 'a');
    const top = p.top_level_card_id;
    for (const req of [
      t.http.post(`${API}/cards/${top}/archive`),
      t.http.delete(`${API}/cards/${top}/archive`),
      t.http.delete(`${API}/cards/${top}`),
    ]) {
      const res = await req.set(as(ann)).expect(409);
      expect(res.body.type).toBe('CARD.TOP_LEVEL');
    }
    for (const body of [{ parent_id: a.id }, { parent_id: top }, { position: 0 }, {}]) {
      const res = await c.relocate(ann, top, body, 409);
      expect(res.body.type).toBe('CARD.TOP_LEVEL');
    }
    expect(await c.get(ann, top)).toMatchObject({ is_archived: false, parent_id: null, depth: 0 });
    expect(await c.get(ann, a.id)).toMatchObject({ parent_id: top, depth: 1 });
  });

  it('deletes a card with its subtree: 200 naming it, children gone, siblings dense, total down by the subtree size', async () => {
    const p = await c.project(ann, org, 'Delete');
    const top = p.top_level_card_id;
    const s0 = await c.create(ann, top, 's0');
    const s1 = await c.create(ann, top, 's1');
    const s2 = await c.create(ann, top, 's2');
    const s3 = await c.create(ann, top, 's3');
    const x = await c.create(ann, s1.id, 'x');
    const y = await c.create(ann, x.id, 'y');
    const z = await c.create(ann, s1.id, 'z');
    const before = await c.listing(ann, p.id);
    expect(before.total).toBe(7);

    const res = await t.http.delete(`${API}/cards/${s1.id}`).set(as(ann)).expect(200);
    expect(res.body).toEqual({ id: s1.id, deleted: true });
    for (const gone of [s1, x, y, z]) {
      await t.http.get(`${API}/cards/${gone.id}`).set(as(ann)).expect(404);
      await t.http.get(`${API}/cards/${gone.id}/children`).set(as(ann)).expect(404);
    }
    const kids = await c.expectDense(ann, top);
    expect(kids.map((k) => k.id)).toEqual([s0.id, s2.id, s3.id]);
    const after = await c.listing(ann, p.id);
    expect(after.total).toBe(before.total - 4);
    expect(ids(after.cards)).toEqual(ids([s0, s2, s3]));
    expect((await c.listing(ann, p.id, { with_archived: 'true' })).total).toBe(3);
    await t.http.delete(`${API}/cards/${s1.id}`).set(as(ann)).expect(404);
  });

  it('deletes an archived subtree and keeps both totals right', async () => {
    const p = await c.project(ann, org, 'Delete archived');
    const top = p.top_level_card_id;
    const a = await c.create(ann, top, 'a');
    const a1 = await c.create(ann, a.id, 'a1');
    await c.create(ann, a1.id, 'a11');
    const b = await c.create(ann, top, 'b');
    await t.http.post(`${API}/cards/${a1.id}/archive`).set(as(ann)).expect(200);
    expect((await c.listing(ann, p.id)).total).toBe(2);
    expect((await c.listing(ann, p.id, { with_archived: 'true' })).total).toBe(4);
    await t.http.delete(`${API}/cards/${a.id}`).set(as(ann)).expect(200);
    const visible = await c.listing(ann, p.id);
    expect(ids(visible.cards)).toEqual([b.id]);
    expect(visible.total).toBe(1);
    expect((await c.listing(ann, p.id, { with_archived: 'true' })).total).toBe(1);
    expect((await c.get(ann, b.id)).position).toBe(0);
  });

  it('deletes the cards of a project when a team admin deletes the project', async () => {
    const p = await c.project(ann, org, 'Doomed');
    const a = await c.create(ann, p.top_level_card_id, 'a');
    const a1 = await c.create(ann, a.id, 'a1');
    await t.http.post(`${API}/cards/${a.id}/comments`).set(as(ann)).send({ content: 'bye' }).expect(201);
    const survivor = await c.project(ann, org, 'Survivor');
    const kept = await c.create(ann, survivor.top_level_card_id, 'kept');

    await t.http.delete(`${API}/projects/${p.id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/projects/${p.id}`).set(as(ann)).expect(404);
    await t.http.get(`${API}/projects/${p.id}/cards`).set(as(ann)).expect(404);
    for (const id of [p.top_level_card_id, a.id, a1.id]) {
      await t.http.get(`${API}/cards/${id}`).set(as(ann)).expect(404);
      await t.http.get(`${API}/cards/${id}/stream`).set(as(ann)).expect(404);
    }
    expect(await c.get(ann, kept.id)).toMatchObject({ title: 'kept', ref: 1 });
    expect((await c.listing(ann, survivor.id)).total).toBe(1);
  });
});

describe('project card listing', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson;
  const created: CardJson[] = [];

  beforeAll(async () => {
    ({ t, c, ann, project } = await cardWorld({ team: 'Listing', project: 'L' }));
    // 12 cards over three levels, created interleaved so id order differs from tree order.
    const a = await c.create(ann, project.top_level_card_id, 'a');
    const b = await c.create(ann, project.top_level_card_id, 'b');
    created.push(a, b);
    let parent = a;
    for (let i = 0; i < 10; i++) {
      const card = await c.create(ann, i % 2 ? b.id : parent.id, `n${i}`);
      created.push(card);
      if (i % 3 === 0) parent = card;
    }
  });
  afterAll(() => t.close());

  it('lists every card at every depth in id order, without the top-level card', async () => {
    const res = await t.http.get(`${API}/projects/${project.id}/cards`).set(as(ann)).expect(200);
    const body = res.body as CardJson[];
    expect(body.map((x) => x.id)).toEqual(created.map((x) => x.id).sort((a, b) => a - b));
    expect(body.map((x) => x.id)).not.toContain(project.top_level_card_id);
    expect(new Set(body.map((x) => x.depth)).size).toBeGreaterThanOrEqual(3);
    expect(body[0]).toEqual(await c.get(ann, body[0].id));
    expect(res.headers['x-service-page']).toBe('1');
    expect(res.headers['x-service-nextpage']).toBeUndefined();
    expect(res.headers['x-service-total']).toBe('12');
    expect(res.headers['x-service-totalpages']).toBe('1');
  });

  it('pages with page and per_page and the X-Service-* headers', async () => {
    const all = created.map((x) => x.id).sort((a, b) => a - b);
    const seen: number[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await t.http.get(`${API}/projects/${project.id}/cards`).query({ page, per_page: 5 }).set(as(ann)).expect(200);
      expect(res.headers['x-service-page']).toBe(String(page));
      expect(res.headers['x-service-total']).toBe('12');
      expect(res.headers['x-service-totalpages']).toBe('3');
      if (page < 3) expect(res.headers['x-service-nextpage']).toBe(String(page + 1));
      else expect(res.headers['x-service-nextpage']).toBeUndefined();
      expect(res.body).toHaveLength(page < 3 ? 5 : 2);
      seen.push(...res.body.map((x: CardJson) => x.id));
    }
    expect(seen).toEqual(all);
    const beyond = await t.http.get(`${API}/projects/${project.id}/cards`).query({ page: 9, per_page: 5 }).set(as(ann)).expect(200);
    expect(beyond.body).toEqual([]);
    expect(beyond.headers['x-service-nextpage']).toBeUndefined();
  });

  it('returns only ids with only_ids=true', async () => {
    const res = await t.http.get(`${API}/projects/${project.id}/cards`).query({ only_ids: 'true', per_page: 4, page: 2 }).set(as(ann)).expect(200);
    const all = created.map((x) => x.id).sort((a, b) => a - b);
    expect(res.body).toEqual(all.slice(4, 8));
    expect(res.headers['x-service-total']).toBe('12');
    expect(res.headers['x-service-nextpage']).toBe('3');
    const full = await t.http.get(`${API}/projects/${project.id}/cards`).query({ only_ids: 'true' }).set(as(ann)).expect(200);
    expect(full.body).toEqual(all);
    const objects = await t.http.get(`${API}/projects/${project.id}/cards`).query({ only_ids: 'false', per_page: 1 }).set(as(ann)).expect(200);
    expect(objects.body[0]).toMatchObject({ id: all[0], ref: expect.any(Number) });
  });

  it('counts archived cards only with with_archived=true', async () => {
    const victim = created[created.length - 1];
    await t.http.post(`${API}/cards/${victim.id}/archive`).set(as(ann)).expect(200);
    const visible = await t.http.get(`${API}/projects/${project.id}/cards`).query({ only_ids: 'true' }).set(as(ann)).expect(200);
    expect(visible.body).not.toContain(victim.id);
    expect(visible.headers['x-service-total']).toBe('11');
    const all = await t.http
      .get(`${API}/projects/${project.id}/cards`)
      .query({ only_ids: 'true', with_archived: 'true' })
      .set(as(ann))
      .expect(200);
    expect(all.body).toContain(victim.id);
    expect(all.headers['x-service-total']).toBe('12');
    await t.http.delete(`${API}/cards/${victim.id}/archive`).set(as(ann)).expect(200);
  });

  it.each([
    ['per_page=0', { per_page: '0' }],
    ['per_page=1001', { per_page: '1001' }],
    ['per_page=abc', { per_page: 'abc' }],
    ['page=0', { page: '0' }],
    ['page=-1', { page: '-1' }],
    ['with_archived=maybe', { with_archived: 'maybe' }],
    ['only_ids=yes please', { only_ids: 'yes please' }],
    ['a filter it cannot read', { filter: 'state = ' }],
    ['an unknown parameter', { sort: 'title' }],
  ])('refuses %s with 400', async (_label, query) => {
    const res = await t.http.get(`${API}/projects/${project.id}/cards`).query(query).set(as(ann)).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(400);
  });

  it('names the filter parameter in the 400 of a filter it cannot read (docs/FILTERS.md)', async () => {
    const res = await t.http.get(`${API}/projects/${project.id}/cards`).query({ filter: 'x and' }).set(as(ann)).expect(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'filter', position: 5 })]);
  });

  it('accepts per_page=1000 and answers 404 for an unknown project', async () => {
    await t.http.get(`${API}/projects/${project.id}/cards`).query({ per_page: 1000 }).set(as(ann)).expect(200);
    await t.http.get(`${API}/projects/999999999/cards`).set(as(ann)).expect(404);
  });

  it('lists an empty project as an empty first page', async () => {
    const org = await c.team(ann, 'Empty');
    const p = await c.project(ann, org, 'Empty');
    const res = await t.http.get(`${API}/projects/${p.id}/cards`).set(as(ann)).expect(200);
    expect(res.body).toEqual([]);
    expect(res.headers['x-service-total']).toBe('0');
    expect(res.headers['x-service-page']).toBe('1');
    expect(res.headers['x-service-nextpage']).toBeUndefined();
  });
});

/**
 * Bulk creation reads back only what differs between the new rows; the
 * records it returns must still be the rows as stored, whatever the parent
 * (nested, under an archived card, with children already).
 */
describe('CardHierarchyApi.createChildren', () => {
  let t: TestApp, ann: TestUser, c: CardClient, team: number;
  let api: CardHierarchyApi;

  beforeAll(async () => {
    ({ t, c, ann, team } = await cardWorld({ team: 'Bulk' }));
    api = t.app.get(CardHierarchyApi);
  });
  afterAll(() => t.close());

  it('returns the new rows as stored, in the order given', async () => {
    const project = await c.project(ann, team, 'Bulk');
    const top = project.top_level_card_id;
    const epic = await c.create(ann, top, 'Epic');
    const story = await c.create(ann, epic.id, 'Story');
    await c.create(ann, story.id, 'Existing task');
    const shelf = await c.create(ann, top, 'Shelf');
    await t.http.post(`${API}/cards/${shelf.id}/archive`).set(as(ann)).expect(200);
    const actor = { userId: ann.id, username: ann.username, isAdmin: false, scopes: null };
    const made = await api.createChildren(
      [
        { parentId: story.id, title: 'Task A' },
        { parentId: shelf.id, title: 'Shelved' },
        { parentId: story.id, title: 'Task B' },
      ],
      actor,
    );
    expect(made.map((m) => [m.title, m.parentId, m.position])).toEqual([
      ['Task A', story.id, 1],
      ['Shelved', shelf.id, 0],
      ['Task B', story.id, 2],
    ]);
    expect(made).toEqual(await api.records(made.map((m) => m.id)));
  });
});
