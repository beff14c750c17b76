import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingWorld, type CardJson, type GroupingClient, type GroupJson, type GroupTypeJson, type ProjectJson } from './grouping-fixtures.js';

describe('groups', () => {
  let t: TestApp, c: GroupingClient, project: ProjectJson, root: number;
  let ann: TestUser, vic: TestUser, eve: TestUser;
  let status: GroupTypeJson;
  let labels: GroupTypeJson;
  let other: ProjectJson;
  let otherType: GroupTypeJson;
  let evilType: GroupTypeJson;

  beforeAll(async () => {
    let org: number;
    ({ t, c, ann, team: org, project, root, users: { vic, eve } } = await groupingWorld({ users: { vic: 'viewer', eve: 'outsider' } }));
    status = await c.type(ann, project.id, 'Status', true);
    labels = await c.type(ann, project.id, 'Labels');
    other = await c.project(ann, org, 'Other');
    otherType = await c.type(ann, other.id, 'Status', true);
    const evilOrg = await c.team(eve, 'Evil');
    const evil = await c.project(eve, evilOrg, 'Evil');
    evilType = await c.type(eve, evil.id, 'Status', true);
  });
  afterAll(() => t.close());

  /** A card with its own scope, so each test sees only its own groups. */
  const scope = async (title: string): Promise<CardJson> => c.card(ann, root, title);
  const titles = (groups: GroupJson[]) => groups.map((g) => g.title);

  it('creates groups scoped at a card, last unless a position is given; positions stay dense', async () => {
    const s = await scope('board 1');
    const res = await t.http.post(`${API}/cards/${s.id}/groups`).set(as(ann)).send({ type_id: status.id, title: 'To do' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      type_id: status.id,
      title: 'To do',
      card_id: s.id,
      position: 0,
      project_id: project.id,
      created_at: expect.any(String),
    });
    await c.group(ann, s.id, status.id, 'Done');
    await c.group(ann, s.id, status.id, 'Doing', 1);
    await c.group(ann, s.id, status.id, 'Backlog', 0);
    await c.group(ann, s.id, status.id, 'Archive', 99);
    const groups = await c.groups(ann, s.id, status.id);
    const own = groups.filter((g) => g.card_id === s.id);
    expect(titles(own)).toEqual(['Backlog', 'To do', 'Doing', 'Done', 'Archive']);
    expect(own.map((g) => g.position)).toEqual([0, 1, 2, 3, 4]);
    expect((await t.http.get(`${API}/groups/${res.body.id}`).set(as(vic)).expect(200)).body).toMatchObject({ title: 'To do', position: 1 });
  });

  it('keeps positions per type and scope', async () => {
    const s = await scope('board 2');
    const a = await c.group(ann, s.id, status.id, 'A');
    const l = await c.group(ann, s.id, labels.id, 'L');
    const inner = await c.card(ann, s.id, 'inner');
    const i = await c.group(ann, inner.id, status.id, 'I');
    expect([a.position, l.position, i.position]).toEqual([0, 0, 0]);
  });

  it('lists the groups scoped at a card or its ancestors: by type, widest scope first, then position', async () => {
    const s = await scope('board 3');
    const inner = await c.card(ann, s.id, 'inner');
    const leaf = await c.card(ann, inner.id, 'leaf');
    const sibling = await c.card(ann, s.id, 'sibling');
    const top = await c.group(ann, root, labels.id, `project-wide ${s.id}`);
    const s2 = await c.group(ann, s.id, status.id, 'S2');
    const s1 = await c.group(ann, s.id, status.id, 'S1', 0);
    const i1 = await c.group(ann, inner.id, status.id, 'I1');
    const l1 = await c.group(ann, leaf.id, status.id, 'L1');
    const sib = await c.group(ann, sibling.id, status.id, 'Sib');

    const underInner = await c.groups(ann, inner.id);
    const ids = underInner.map((g) => g.id);
    expect(ids).toEqual(expect.arrayContaining([s1.id, s2.id, i1.id, top.id]));
    expect(ids).not.toContain(l1.id);
    expect(ids).not.toContain(sib.id);
    const statusIds = underInner.filter((g) => g.type_id === status.id).map((g) => g.id);
    expect(statusIds.slice(-3)).toEqual([s1.id, s2.id, i1.id]);
    // By type first: every status group before the labels ones (status was created first).
    const types = underInner.map((g) => g.type_id);
    expect(types).toEqual([...types].sort((a, b) => a - b));

    expect((await c.groups(ann, inner.id, labels.id)).every((g) => g.type_id === labels.id)).toBe(true);
    expect((await c.groups(ann, inner.id, labels.id)).map((g) => g.id)).toContain(top.id);
    expect((await c.groups(ann, leaf.id, status.id)).map((g) => g.id).slice(-4)).toEqual([s1.id, s2.id, i1.id, l1.id]);
    expect((await c.groups(ann, root, status.id)).map((g) => g.id)).not.toContain(s1.id);
  });

  it.each([
    ['a type of another project', () => otherType.id],
    ["another team's type", () => evilType.id],
    ['an unknown type', () => 999999],
    ['a malformed type', () => 'abc'],
  ])('lists with %s as type_id → 400 naming type_id', async (_label, typeId) => {
    const res = await t.http.get(`${API}/cards/${root}/groups`).query({ type_id: String(typeId()) }).set(as(ann)).expect(400);
    expect(res.body.errors.length).toBeGreaterThan(0);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(res.body.errors.map(() => 'type_id'));
  });

  it('refuses a duplicate title in one scope and type (any case) with 409; elsewhere the title is free', async () => {
    const s = await scope('board 4');
    const inner = await c.card(ann, s.id, 'inner');
    await c.group(ann, s.id, status.id, 'Review');
    const before = await c.groups(ann, inner.id);
    for (const title of ['Review', 'review', '  REVIEW ']) {
      const res = await t.http.post(`${API}/cards/${s.id}/groups`).set(as(ann)).send({ type_id: status.id, title }).expect(409);
      expect(res.body.type).toBe('GROUPING.DUPLICATE_GROUP_TITLE');
    }
    expect(await c.groups(ann, inner.id)).toEqual(before);
    await c.group(ann, s.id, labels.id, 'Review');
    await c.group(ann, inner.id, status.id, 'Review');
  });

  it('renames and reorders a group with PUT', async () => {
    const s = await scope('board 5');
    const [a, b, cc] = [await c.group(ann, s.id, status.id, 'A'), await c.group(ann, s.id, status.id, 'B'), await c.group(ann, s.id, status.id, 'C')];
    const res = await t.http.put(`${API}/groups/${a.id}`).set(as(ann)).send({ title: 'A+', position: 2 }).expect(200);
    expect(res.body).toMatchObject({ id: a.id, title: 'A+', position: 2, card_id: s.id, type_id: status.id });
    const own = async () => (await c.groups(ann, s.id, status.id)).filter((g) => g.card_id === s.id);
    expect((await own()).map((g) => [g.id, g.position])).toEqual([
      [b.id, 0],
      [cc.id, 1],
      [a.id, 2],
    ]);
    await t.http.put(`${API}/groups/${cc.id}`).set(as(ann)).send({ position: 0 }).expect(200);
    expect((await own()).map((g) => g.id)).toEqual([cc.id, b.id, a.id]);
    await t.http.put(`${API}/groups/${b.id}`).set(as(ann)).send({ title: 'b' }).expect(200);
    await t.http.put(`${API}/groups/${b.id}`).set(as(ann)).send({ title: 'B' }).expect(200);
    const dup = await t.http.put(`${API}/groups/${b.id}`).set(as(ann)).send({ title: 'a+' }).expect(409);
    expect(dup.body.type).toBe('GROUPING.DUPLICATE_GROUP_TITLE');
    expect((await own()).map((g) => [g.title, g.position])).toEqual([
      ['C', 0],
      ['B', 1],
      ['A+', 2],
    ]);
  });

  it('shows a renamed group’s title in its members’ card JSON', async () => {
    const s = await scope('board 6');
    const g = await c.group(ann, s.id, labels.id, 'old');
    const card = await c.card(ann, s.id, 'member', { group_id: g.id });
    await t.http.put(`${API}/groups/${g.id}`).set(as(ann)).send({ title: 'new' }).expect(200);
    expect((await c.get(ann, card.id)).groups).toEqual([{ id: g.id, type_id: labels.id, title: 'new', card_position: 0 }]);
  });

  it.each([
    ['no type_id', { title: 'X' }, 'type_id'],
    ['a type of another project', () => ({ type_id: otherType.id, title: 'X' }), 'type_id'],
    ["another team's type", () => ({ type_id: evilType.id, title: 'X' }), 'type_id'],
    ['an unknown type', { type_id: 999999, title: 'X' }, 'type_id'],
    ['a string type_id', { type_id: 'status', title: 'X' }, 'type_id'],
    ['no title', () => ({ type_id: status.id }), 'title'],
    ['a blank title', () => ({ type_id: status.id, title: ' ' }), 'title'],
    ['a title over 1024 characters', () => ({ type_id: status.id, title: 't'.repeat(1025) }), 'title'],
    ['a position in exponent form as text', () => ({ type_id: status.id, title: 'X', position: '1e20' }), 'position'],
    ['an unknown property', () => ({ type_id: status.id, title: 'X', color: 'red' }), 'color'],
  ])('refuses a creation with %s (400 naming the property), creating nothing', async (_label, body, field) => {
    const s = await scope('board 7');
    const before = await c.groups(ann, s.id);
    const payload = typeof body === 'function' ? body() : body;
    const res = await t.http.post(`${API}/cards/${s.id}/groups`).set(as(ann)).send(payload).expect(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await c.groups(ann, s.id)).toEqual(before);
  });

  it.each([
    ['an empty body', {}, 'title'],
    ['a blank title', { title: '' }, 'title'],
    ['a fractional position', { position: 0.5 }, 'position'],
    ['a type change', { type_id: 1 }, 'type_id'],
  ])('refuses an update with %s (400), changing nothing', async (_label, body, field) => {
    const s = await scope('board 8');
    const g = await c.group(ann, s.id, status.id, 'Fixed');
    const res = await t.http.put(`${API}/groups/${g.id}`).set(as(ann)).send(body).expect(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect((await t.http.get(`${API}/groups/${g.id}`).set(as(ann)).expect(200)).body).toEqual(g);
  });

  it('deletes a group: its memberships go, the cards stay, the other groups close ranks', async () => {
    const s = await scope('board 9');
    const [a, b, cc] = [await c.group(ann, s.id, status.id, 'A'), await c.group(ann, s.id, status.id, 'B'), await c.group(ann, s.id, status.id, 'C')];
    const tag = await c.group(ann, s.id, labels.id, 'tag');
    const x = await c.card(ann, s.id, 'x', { group_id: b.id });
    const y = await c.card(ann, s.id, 'y', { group_id: b.id });
    const z = await c.card(ann, s.id, 'z', { group_id: cc.id });
    await c.addToGroup(ann, y.id, { group_id: tag.id });

    await t.http.delete(`${API}/groups/${b.id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/groups/${b.id}`).set(as(ann)).expect(404);
    expect((await c.get(ann, x.id)).groups).toEqual([]);
    expect((await c.get(ann, y.id)).groups).toEqual([{ id: tag.id, type_id: labels.id, title: 'tag', card_position: 0 }]);
    expect((await c.get(ann, z.id)).groups).toEqual([{ id: cc.id, type_id: status.id, title: 'C', card_position: 0 }]);
    const own = (await c.groups(ann, s.id, status.id)).filter((g) => g.card_id === s.id);
    expect(own.map((g) => [g.id, g.position])).toEqual([
      [a.id, 0],
      [cc.id, 1],
    ]);
    const [entry] = await c.groupEntries(ann, x.id);
    expect(entry).toMatchObject({ user_id: ann.id, data: { change: 'removed', group_id: b.id, group_title: 'B', reason: 'group_deleted' } });
    await t.http.delete(`${API}/groups/${b.id}`).set(as(ann)).expect(404);
  });

  it('deleting the card a group is scoped at deletes the group and its memberships', async () => {
    const s = await scope('board 10');
    const g = await c.group(ann, s.id, status.id, 'Scoped');
    const survivor = await c.group(ann, root, labels.id, `survivor ${s.id}`);
    const kid = await c.card(ann, s.id, 'kid', { group_id: g.id });
    await c.addToGroup(ann, kid.id, { group_id: survivor.id });
    const outside = await c.card(ann, root, 'outside', { group_id: survivor.id });
    await t.http.delete(`${API}/cards/${s.id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/groups/${g.id}`).set(as(ann)).expect(404);
    expect(await c.column(ann, project.id, survivor.id)).toEqual([outside.id]);
  });

  describe('access', () => {
    it('lets a viewer read groups but not change them (403)', async () => {
      const s = await scope('board 11');
      const g = await c.group(ann, s.id, status.id, 'Watched');
      expect((await c.groups(vic, s.id, status.id)).map((x) => x.id)).toContain(g.id);
      await t.http.post(`${API}/cards/${s.id}/groups`).set(as(vic)).send({ type_id: status.id, title: 'Nope' }).expect(403);
      await t.http.put(`${API}/groups/${g.id}`).set(as(vic)).send({ title: 'Nope' }).expect(403);
      await t.http.delete(`${API}/groups/${g.id}`).set(as(vic)).expect(403);
      expect((await t.http.get(`${API}/groups/${g.id}`).set(as(vic)).expect(200)).body).toEqual(g);
    });

    it('hides groups and cards from users outside the team (404), and 404s unknown path ids', async () => {
      const s = await scope('board 12');
      const g = await c.group(ann, s.id, status.id, 'Hidden');
      await t.http.get(`${API}/cards/${s.id}/groups`).set(as(eve)).expect(404);
      await t.http.post(`${API}/cards/${s.id}/groups`).set(as(eve)).send({ type_id: evilType.id, title: 'Evil' }).expect(404);
      await t.http.get(`${API}/groups/${g.id}`).set(as(eve)).expect(404);
      await t.http.put(`${API}/groups/${g.id}`).set(as(eve)).send({ title: 'Evil' }).expect(404);
      await t.http.delete(`${API}/groups/${g.id}`).set(as(eve)).expect(404);
      await t.http.get(`${API}/groups/999999`).set(as(ann)).expect(404);
      await t.http.get(`${API}/groups/0`).set(as(ann)).expect(404);
      await t.http.get(`${API}/cards/999999/groups`).set(as(ann)).expect(404);
      await t.http.get(`${API}/cards/x/groups`).set(as(ann)).expect(404);
      expect((await t.http.get(`${API}/groups/${g.id}`).set(as(ann)).expect(200)).body).toEqual(g);
    });
  });

  it('documents the grouping routes in the OpenAPI document', async () => {
    const res = await t.http.get(`${API}/spec.json`).expect(200);
    for (const path of [
      '/projects/{id}/group-types',
      '/group-types/{id}',
      '/cards/{id}/groups',
      '/groups/{id}',
      '/cards/{id}/add-to-group',
      '/cards/{id}/remove-from-group',
      '/cards/{id}/remove-from-group-type',
    ]) {
      expect(Object.keys(res.body.paths)).toContain(`${API}${path}`);
    }
    const schemas = res.body.components.schemas;
    expect(Object.keys(schemas.AddToGroupDto.properties)).toEqual(['group_id', 'position']);
    expect(schemas.CreateGroupDto.required).toEqual(expect.arrayContaining(['type_id', 'title']));
  });

  it('offers the groups a card may join as the choices of its group_type field, and shows them as its value', async () => {
    const s = await scope('board 13');
    const g = await c.group(ann, s.id, labels.id, 'choice');
    const top = await c.group(ann, root, labels.id, `top choice ${s.id}`);
    const card = await c.card(ann, s.id, 'chooser', { group_id: g.id });
    await c.addToGroup(ann, card.id, { group_id: top.id });
    const choices = (await t.http.get(`${API}/cards/${card.id}/attributes/${labels.attribute_id}/choices`).set(as(ann)).expect(200)).body;
    expect(choices).toEqual(expect.arrayContaining([
      [g.id, 'choice'],
      [top.id, `top choice ${s.id}`],
    ]));
    const under = (await c.groups(ann, s.id, labels.id)).map((x) => [x.id, x.title]);
    expect(choices).toEqual(under);
    const view = await c.get(ann, card.id);
    expect((view.attributes as Record<string, unknown>).Labels).toEqual(expect.arrayContaining([g.id, top.id]));
    // The field is set only through the grouping operations.
    const res = await t.http.post(`${API}/cards/${card.id}/attributes/Labels`).set(as(ann)).send({ value: g.id }).expect(400);
    expect(JSON.stringify(res.body)).toMatch(/grouping/);
  });
});
