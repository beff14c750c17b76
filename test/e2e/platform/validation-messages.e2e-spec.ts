import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const API = '/api/1.0';

/**
 * DESIGN.md §5: a 400 names the field and the format it expects, once. A
 * property left out used to get every rule's message ("title must be shorter
 * than or equal to 1024 characters; title should not be empty; title must be
 * a string"), a repeated query parameter was "not a string", and a position
 * of an integer too large for a safe integer was refused as not an integer.
 */
describe('validation messages', () => {
  let t: TestApp;
  let u: TestUser;
  let org: number;
  let project: { id: number; top_level_card_id: number };
  let card: number;

  beforeAll(async () => {
    t = await createTestApp();
    u = await t.user();
    org = (await t.http.post(`${API}/organizations`).set(as(u)).send({ name: 'o' }).expect(201)).body.id;
    project = (await t.http.post(`${API}/organizations/${org}/projects`).set(as(u)).send({ title: 'p' }).expect(201)).body;
    card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'c' }).expect(201)).body.id;
  });
  afterAll(() => t.close());

  async function refused(res: Promise<{ status: number; body: { detail: string; errors: unknown } }>) {
    const { status, body } = await res;
    return { status, detail: body.detail, errors: body.errors };
  }
  const once = (field: string, message: string) => ({ status: 400, detail: `${field}: ${message}`, errors: [{ field, message }] });

  it('says a required property left out is required, once', async () => {
    const post = (path: string, body: object) => refused(t.http.post(`${API}${path}`).set(as(u)).send(body));
    expect(await post(`/organizations/${org}/projects`, {})).toEqual(once('title', 'title is required'));
    expect(await post(`/cards/${card}/comments`, {})).toEqual(once('content', 'content is required'));
    expect(await post(`/projects/${project.id}/attributes`, { type: 'text' })).toEqual(once('name', 'name is required'));
    expect(await post(`/cards/${card}/children`, {})).toEqual(once('title', 'title is required'));
    expect(await post(`/cards/${card}/add-to-group`, {})).toEqual(once('group_id', 'group_id is required'));
  });

  it('says one thing of a property given a wrong value: its format first', async () => {
    const post = (path: string, body: object) => refused(t.http.post(`${API}${path}`).set(as(u)).send(body));
    expect(await post(`/organizations/${org}/projects`, { title: 5 })).toEqual(once('title', 'title must be a string'));
    expect(await post(`/cards/${card}/children`, { title: '' })).toEqual(once('title', 'title should not be empty'));
    expect(await post(`/cards/${card}/add-to-group`, { group_id: 'x' })).toEqual(once('group_id', 'group_id must be an integer number'));
    expect(await refused(t.http.get(`${API}/cards/${card}/groups?type_id=`).set(as(u)))).toEqual(once('type_id', 'type_id must be an integer number'));
  });

  it('lists the types the attributes endpoint makes, and says where group_type fields come from', async () => {
    const bogus = await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(u)).send({ name: 'X', type: 'bogus' }).expect(400);
    const listed = (bogus.body.detail as string).replace(/^type: type must be one of the following values: /, '').split(', ');
    expect(listed).toContain('text');
    expect(listed).not.toContain('group_type');
    const groupType = await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(u)).send({ name: 'X', type: 'group_type' }).expect(400);
    expect(groupType.body.detail).toMatch(/^type: group_type fields come with group types/);
  });

  it('says a query parameter given more than once is', async () => {
    const message = 'page is given more than once; it takes one value';
    expect(await refused(t.http.get(`${API}/projects/${project.id}/cards?page=1&page=2`).set(as(u)))).toEqual(once('page', message));
    expect(await refused(t.http.get(`${API}/organizations?per_page=5&per_page=5`).set(as(u)))).toEqual(once('per_page', 'per_page is given more than once; it takes one value'));
    // Once, it is read.
    await t.http.get(`${API}/projects/${project.id}/cards?page=1`).set(as(u)).expect(200);
  });

  it('takes any integer as a position, clamped to the list, and refuses the rest', async () => {
    const top = project.top_level_card_id;
    const made: number[] = [];
    for (const title of ['k1', 'k2', 'k3']) made.push((await t.http.post(`${API}/cards/${top}/children`).set(as(u)).send({ title }).expect(201)).body.id);
    const relocate = (id: number, raw: string) => t.http.post(`${API}/cards/${id}/relocate`).set(as(u)).type('json').send(raw);
    const last = (await relocate(made[0]!, '{"position":1e20}').expect(200)).body.position as number;
    expect(last).toBeGreaterThan(0);
    expect((await relocate(made[0]!, '{"position":-9007199254740993}').expect(200)).body.position).toBe(0);
    expect((await relocate(made[1]!, '{"position":1e400}').expect(200)).body.position).toBe(last);
    expect((await relocate(made[2]!, '{"position":-1e20}').expect(200)).body.position).toBe(0);
    // Digits past the safe integers, in a form or a JSON string, likewise.
    expect((await t.http.post(`${API}/cards/${made[2]!}/relocate`).set(as(u)).type('form').send({ position: '9007199254740993' }).expect(200)).body.position).toBe(last);
    const message = 'position must be an integer (clamped to the list: 0 or less is first, past the end is last)';
    for (const raw of ['{"position":1.5}', '{"position":"x"}', '{"position":"1e20"}', '{"position":true}']) {
      expect([raw, await refused(relocate(made[0]!, raw))]).toEqual([raw, once('position', message)]);
    }

    const type = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(u)).send({ name: 'Column' }).expect(201)).body.id;
    const g = (await t.http.post(`${API}/cards/${top}/groups`).set(as(u)).send({ type_id: type, title: 'g' }).expect(201)).body.id;
    // A group's place likewise.
    const group = (raw: string) => t.http.post(`${API}/cards/${top}/groups`).set(as(u)).type('json').send(raw).expect(201);
    expect((await group(`{"type_id":${type},"title":"h","position":1e20}`)).body.position).toBe(1);
    expect((await group(`{"type_id":${type},"title":"i","position":-1e20}`)).body.position).toBe(0);
    const add = (id: number, raw: string) => t.http.post(`${API}/cards/${id}/add-to-group`).set(as(u)).type('json').send(raw);
    const placed = async (id: number, raw: string) => ((await add(id, raw).expect(200)).body.groups as { id: number; card_position: number }[]).find((x) => x.id === g)?.card_position;
    expect(await placed(made[0]!, `{"group_id":${g}}`)).toBe(0);
    expect(await placed(made[1]!, `{"group_id":${g},"position":1e20}`)).toBe(1);
    expect(await placed(made[2]!, `{"group_id":${g},"position":-9007199254740993}`)).toBe(0);
    expect(await refused(add(made[2]!, `{"group_id":${g},"position":1.5}`))).toEqual(once('position', message));
  });
});
