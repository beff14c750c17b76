import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingWorld, type GroupingClient, type ProjectJson } from './grouping-fixtures.js';

interface AttributeJson {
  id: number;
  name: string;
  type: string;
  group_type_id: number | null;
}

describe('group types', () => {
  let t: TestApp, c: GroupingClient, project: ProjectJson;
  let ann: TestUser, mia: TestUser, vic: TestUser, eve: TestUser;
  beforeAll(async () => ({ t, c, ann, project, users: { mia, vic, eve } } = await groupingWorld({ users: { mia: 'member', vic: 'viewer', eve: 'outsider' } })));
  afterAll(() => t.close());

  const attributes = async (projectId = project.id): Promise<AttributeJson[]> =>
    (await t.http.get(`${API}/projects/${projectId}/attributes`).set(as(ann)).expect(200)).body;

  it('creates a group type with its group_type field, listed by the project and its attributes', async () => {
    const res = await t.http
      .post(`${API}/projects/${project.id}/group-types`)
      .set(as(mia))
      .send({ name: 'Status', one_group_per_card: true })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      project_id: project.id,
      name: 'Status',
      one_group_per_card: true,
      attribute_id: expect.any(Number),
      created_at: expect.any(String),
    });
    const type = res.body;
    expect((await t.http.get(`${API}/group-types/${type.id}`).set(as(vic)).expect(200)).body).toEqual(type);
    expect(await c.types(vic, project.id)).toEqual([type]);
    const field = (await attributes()).find((a) => a.id === type.attribute_id);
    expect(field).toMatchObject({ name: 'Status', type: 'group_type', group_type_id: type.id });
  });

  it('defaults one_group_per_card to false and lists types in id order', async () => {
    const labels = await c.type(ann, project.id, 'Labels' + Date.now());
    const res = await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(ann)).send({ name: 'Topics' }).expect(201);
    expect(res.body.one_group_per_card).toBe(false);
    const ids = (await c.types(ann, project.id)).map((x) => x.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining([labels.id, res.body.id]));
  });

  it('renames a type together with its field, and switches one_group_per_card', async () => {
    const type = await c.type(ann, project.id, 'Phase');
    const res = await t.http.put(`${API}/group-types/${type.id}`).set(as(mia)).send({ name: 'Stage' }).expect(200);
    expect(res.body).toMatchObject({ id: type.id, name: 'Stage', one_group_per_card: false, attribute_id: type.attribute_id });
    expect((await attributes()).find((a) => a.id === type.attribute_id)?.name).toBe('Stage');
    const flipped = await t.http.put(`${API}/group-types/${type.id}`).set(as(mia)).send({ one_group_per_card: true }).expect(200);
    expect(flipped.body).toMatchObject({ name: 'Stage', one_group_per_card: true });
    // Another case of its own name is a rename, not a clash.
    await t.http.put(`${API}/group-types/${type.id}`).set(as(mia)).send({ name: 'STAGE' }).expect(200);
  });

  it('refuses a name taken by another type or field of the project (any case) with 409, creating nothing', async () => {
    await c.type(ann, project.id, 'Sprint');
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
    const before = { types: await c.types(ann, project.id), attributes: await attributes() };
    for (const name of ['Sprint', 'sprint', 'ESTIMATE']) {
      const res = await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(ann)).send({ name }).expect(409);
      expect(res.body.status).toBe(409);
    }
    const renamed = await c.type(ann, project.id, 'Cycle');
    await t.http.put(`${API}/group-types/${renamed.id}`).set(as(ann)).send({ name: 'sprint' }).expect(409);
    await t.http.put(`${API}/group-types/${renamed.id}`).set(as(ann)).send({ name: 'estimate' }).expect(409);
    await t.http.delete(`${API}/group-types/${renamed.id}`).set(as(ann)).expect(200);
    expect(await c.types(ann, project.id)).toEqual(before.types);
    expect(await attributes()).toEqual(before.attributes);
  });

  it('takes form fields', async () => {
    const res = await t.http
      .post(`${API}/projects/${project.id}/group-types`)
      .set(as(ann))
      .type('form')
      .send('name=Columns&one_group_per_card=true')
      .expect(201);
    expect(res.body).toMatchObject({ name: 'Columns', one_group_per_card: true });
  });

  it('allows the same name in another project', async () => {
    const org = await c.team(ann, 'Second');
    const second = await c.project(ann, org, 'Second');
    const type = await c.type(ann, second.id, 'Status', true);
    expect(type.project_id).toBe(second.id);
  });

  it.each([
    ['no name', {}, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a number as name', { name: 42 }, 'name'],
    ['a name over 1024 characters', { name: 'n'.repeat(1025) }, 'name'],
    ['a name with a line break', { name: 'a\nb' }, 'name'],
    ['a non-boolean one_group_per_card', { name: 'X', one_group_per_card: 'yes' }, 'one_group_per_card'],
    ['an unknown property', { name: 'X', colour: 'red' }, 'colour'],
  ])('refuses %s with 400 naming the property, creating nothing', async (_label, body, field) => {
    const before = { types: await c.types(ann, project.id), attributes: await attributes() };
    const res = await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(ann)).send(body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await c.types(ann, project.id)).toEqual(before.types);
    expect(await attributes()).toEqual(before.attributes);
  });

  it.each([
    ['an empty body', {}, 'name'],
    ['a blank name', { name: ' ' }, 'name'],
    ['a flag that is no boolean', { one_group_per_card: 'maybe' }, 'one_group_per_card'],
    ['an unknown property', { project_id: 5 }, 'project_id'],
  ])('refuses an update with %s (400), changing nothing', async (_label, body, field) => {
    const type = await c.type(ann, project.id, `Unchanged ${field} ${Object.keys(body).length}${Math.random()}`);
    const res = await t.http.put(`${API}/group-types/${type.id}`).set(as(ann)).send(body).expect(400);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect((await t.http.get(`${API}/group-types/${type.id}`).set(as(ann)).expect(200)).body).toEqual(type);
  });

  it('refuses to allow one group per card while a card is in several groups of the type (409)', async () => {
    const labels = await c.type(ann, project.id, 'Tags');
    const a = await c.group(ann, project.top_level_card_id, labels.id, 'a');
    const b = await c.group(ann, project.top_level_card_id, labels.id, 'b');
    const card = await c.card(ann, project.top_level_card_id, 'tagged', { group_id: a.id });
    await c.addToGroup(ann, card.id, { group_id: b.id });
    const res = await t.http.put(`${API}/group-types/${labels.id}`).set(as(ann)).send({ name: 'Kinds', one_group_per_card: true }).expect(409);
    expect(res.body.type).toBe('GROUPING.SEVERAL_GROUPS_PER_CARD');
    expect((await t.http.get(`${API}/group-types/${labels.id}`).set(as(ann)).expect(200)).body).toEqual(labels);
    await c.removeFromGroup(ann, card.id, { group_id: b.id });
    await t.http.put(`${API}/group-types/${labels.id}`).set(as(ann)).send({ one_group_per_card: true }).expect(200);
    await c.addToGroup(ann, card.id, { group_id: b.id }, 409);
  });

  it('deletes a type with its groups, memberships and field; the cards stay and their streams say so', async () => {
    const type = await c.type(ann, project.id, 'Doomed', true);
    const other = await c.type(ann, project.id, 'Survivor');
    const root = project.top_level_card_id;
    const parent = await c.card(ann, root, 'parent');
    const g1 = await c.group(ann, root, type.id, 'one');
    const g2 = await c.group(ann, parent.id, type.id, 'two');
    const kept = await c.group(ann, root, other.id, 'kept');
    const x = await c.card(ann, root, 'x', { group_id: g1.id });
    const y = await c.card(ann, parent.id, 'y', { group_id: g2.id });
    await c.addToGroup(ann, y.id, { group_id: kept.id });

    await t.http.delete(`${API}/group-types/${type.id}`).set(as(mia)).expect(200);
    await t.http.get(`${API}/group-types/${type.id}`).set(as(ann)).expect(404);
    await t.http.get(`${API}/groups/${g1.id}`).set(as(ann)).expect(404);
    await t.http.get(`${API}/groups/${g2.id}`).set(as(ann)).expect(404);
    expect((await c.types(ann, project.id)).map((tt) => tt.id)).not.toContain(type.id);
    expect((await attributes()).map((a) => a.id)).not.toContain(type.attribute_id);
    expect((await c.get(ann, x.id)).groups).toEqual([]);
    expect((await c.get(ann, y.id)).groups.map((g) => g.id)).toEqual([kept.id]);
    const [entry] = await c.groupEntries(ann, y.id);
    expect(entry.data).toMatchObject({ change: 'removed', group_id: g2.id, reason: 'group_type_deleted' });
    expect((await c.groupEntries(ann, x.id))[0].data).toMatchObject({ change: 'removed', group_id: g1.id });
    expect(await c.groups(ann, parent.id, other.id)).toEqual([kept]);
    await t.http.get(`${API}/cards/${parent.id}/groups`).query({ type_id: String(type.id) }).set(as(ann)).expect(400);
    await t.http.delete(`${API}/group-types/${type.id}`).set(as(ann)).expect(404);
  });

  describe('access', () => {
    it('lets a viewer read types but not change them (403)', async () => {
      const type = await c.type(ann, project.id, 'Watched');
      await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(vic)).send({ name: 'Nope' }).expect(403);
      await t.http.put(`${API}/group-types/${type.id}`).set(as(vic)).send({ name: 'Nope' }).expect(403);
      await t.http.delete(`${API}/group-types/${type.id}`).set(as(vic)).expect(403);
      expect((await t.http.get(`${API}/group-types/${type.id}`).set(as(vic)).expect(200)).body).toEqual(type);
    });

    it('hides types from users outside the team (404) and answers 404 for unknown ids', async () => {
      const type = await c.type(ann, project.id, 'Hidden');
      await t.http.get(`${API}/projects/${project.id}/group-types`).set(as(eve)).expect(404);
      await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(eve)).send({ name: 'Evil' }).expect(404);
      await t.http.get(`${API}/group-types/${type.id}`).set(as(eve)).expect(404);
      await t.http.put(`${API}/group-types/${type.id}`).set(as(eve)).send({ name: 'Evil' }).expect(404);
      await t.http.delete(`${API}/group-types/${type.id}`).set(as(eve)).expect(404);
      await t.http.get(`${API}/group-types/999999`).set(as(ann)).expect(404);
      await t.http.get(`${API}/group-types/abc`).set(as(ann)).expect(404);
      await t.http.get(`${API}/projects/999999/group-types`).set(as(ann)).expect(404);
      await t.http.get(`${API}/projects/${project.id}/group-types`).expect(401);
      expect((await t.http.get(`${API}/group-types/${type.id}`).set(as(ann)).expect(200)).body).toEqual(type);
    });
  });

  it('goes with its project', async () => {
    const org = await c.team(ann, 'Temp');
    const temp = await c.project(ann, org, 'Temp');
    const type = await c.type(ann, temp.id, 'Status', true);
    const group = await c.group(ann, temp.top_level_card_id, type.id, 'To do');
    await c.card(ann, temp.top_level_card_id, 'card', { group_id: group.id });
    await t.http.delete(`${API}/projects/${temp.id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/group-types/${type.id}`).set(as(ann)).expect(404);
    await t.http.get(`${API}/groups/${group.id}`).set(as(ann)).expect(404);
    // Not only hidden: the rows are gone.
    const db = t.app.get(DataSource);
    const [row] = await db.query(
      `SELECT (SELECT count(*) FROM grouping.group_types WHERE project_id = $1)::int AS types,
              (SELECT count(*) FROM grouping.groups WHERE project_id = $1)::int AS groups,
              (SELECT count(*) FROM grouping.memberships WHERE group_id = $2)::int AS memberships`,
      [temp.id, group.id],
    );
    expect(row).toEqual({ types: 0, groups: 0, memberships: 0 });
  });
});
