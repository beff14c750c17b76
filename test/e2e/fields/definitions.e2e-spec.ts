import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FieldsApi } from '../../../src/modules/fields/index.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type AttributeJson, type FieldsClient, type World } from './fields-fixtures.js';

describe('field definitions', () => {
  let t: TestApp, c: FieldsClient, w: World;
  let ann: TestUser, vic: TestUser, eve: TestUser; // eve: another team
  let evil: World;
  let evilField: AttributeJson;

  beforeAll(async () => {
    ({ t, c, ann, w, users: { vic, eve } } = await fieldsWorld({ users: { vic: 'viewer', eve: 'outsider' } }));
    evil = await c.world(eve, 'Evil');
    evilField = await c.field(eve, evil.project, 'Evil field', 'text');
  });
  afterAll(() => t.close());

  const attrs = (user: TestUser, project: number) => t.http.get(`${API}/projects/${project}/attributes`).set(as(user));
  const create = (user: TestUser, project: number, body: object) =>
    t.http.post(`${API}/projects/${project}/attributes`).set(as(user)).send(body);
  const update = (user: TestUser, id: number, body: object) => t.http.put(`${API}/attributes/${id}`).set(as(user)).send(body);

  it('GET /attribute-types lists every type with a label and its options', async () => {
    const res = await t.http.get(`${API}/attribute-types`).set(as(ann)).expect(200);
    expect(res.body.map((x: { type: string }) => x.type)).toEqual([
      'text',
      'content',
      'number',
      'bool',
      'date',
      'time',
      'members',
      'likes',
      'relationships',
      'files',
      'group_type',
    ]);
    for (const x of res.body) expect(x).toEqual({ type: expect.any(String), label: expect.any(String), options: expect.any(Object) });
    expect(res.body.find((x: { type: string }) => x.type === 'date').options).toEqual({ time: 'boolean', period: 'boolean' });
    await t.http.get(`${API}/attribute-types`).expect(401);
  });

  it('creates project fields (201) and lists them in creation order', async () => {
    const created = await create(ann, w.project, { name: '  Estimate ', type: 'number' }).expect(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'Estimate',
      type: 'number',
      project_id: w.project,
      model_id: null,
      options: {},
      group_type_id: null,
    });
    const due = await create(ann, w.project, { name: 'Due', type: 'date', options: { time: true } }).expect(201);
    expect(due.body.options).toEqual({ time: true });
    const list = (await attrs(vic, w.project).expect(200)).body as AttributeJson[];
    expect(list.map((a) => a.name)).toEqual(['Estimate', 'Due']);
    expect((await t.http.get(`${API}/attributes/${due.body.id}`).set(as(vic)).expect(200)).body).toEqual(due.body);
  });

  it('refuses a name already used in the project, in any case (409)', async () => {
    await create(ann, w.project, { name: 'Owner', type: 'members' }).expect(201);
    const res = await create(ann, w.project, { name: 'owner', type: 'text' }).expect(409);
    expect(res.body.type).toBe('FIELDS.NAME_TAKEN');
  });

  it.each([
    [{ type: 'text' }, 'name'],
    [{ name: '', type: 'text' }, 'name'],
    [{ name: '   ', type: 'text' }, 'name'],
    [{ name: 'x'.repeat(1025), type: 'text' }, 'name'],
    [{ name: 'Bad', type: 'colour' }, 'type'],
    [{ name: 'Bad' }, 'type'],
    [{ name: 'Bad', type: 'group_type' }, 'type'],
    [{ name: 'Bad', type: 'date', options: { timezone: true } }, 'options'],
    [{ name: 'Bad', type: 'date', options: { time: 'yes' } }, 'options'],
    [{ name: 'Bad', type: 'text', options: { time: true } }, 'options'],
    [{ name: 'Bad', type: 'text', options: [] }, 'options'],
    [{ name: 'Bad', type: 'text', extra: 1 }, 'extra'],
  ])('refuses %j with a 400 naming %s', async (body, field) => {
    const res = await create(ann, w.project, body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(res.body.errors ?? res.body.detail)).toContain(field);
  });

  it('renames and changes options with PUT; the type never changes', async () => {
    const f = (await create(ann, w.project, { name: 'Size', type: 'text' }).expect(201)).body as AttributeJson;
    expect((await update(ann, f.id, { name: 'Size (cm)' }).expect(200)).body).toMatchObject({ id: f.id, name: 'Size (cm)', type: 'text' });
    expect((await update(ann, f.id, { name: 'Size (cm)', type: 'text' }).expect(200)).body.name).toBe('Size (cm)');
    await update(ann, f.id, { type: 'number' }).expect(400);
    await update(ann, f.id, {}).expect(400);
    await update(ann, f.id, { name: 'estimate' }).expect(409);
    await update(ann, f.id, { name: '' }).expect(400);
  });

  it('refuses "__proto__" as the name of a field, a model field or a group type (400), which no card JSON could carry', async () => {
    const refused = (res: { body: { errors?: Array<{ field: string; message: string }> } }) =>
      expect(res.body.errors).toEqual([{ field: 'name', message: expect.stringContaining('__proto__') }]);
    refused(await create(ann, w.project, { name: '__proto__', type: 'text' }).expect(400));
    refused(await create(ann, w.project, { name: ' __proto__ ', type: 'number' }).expect(400));
    const f = (await create(ann, w.project, { name: 'Proto', type: 'text' }).expect(201)).body as AttributeJson;
    refused(await update(ann, f.id, { name: '__proto__' }).expect(400));
    const model = (await t.http.post(`${API}/projects/${w.project}/models`).set(as(ann)).send({ name: 'Proto model' }).expect(201)).body;
    refused(await t.http.post(`${API}/models/${model.id}/attributes`).set(as(ann)).send({ name: '__proto__', type: 'text' }).expect(400));
    const groupType = await t.http.post(`${API}/projects/${w.project}/group-types`).set(as(ann)).send({ name: '__proto__' }).expect(400);
    expect(groupType.body.detail).toContain('__proto__');
    const names = ((await attrs(ann, w.project).expect(200)).body as AttributeJson[]).map((a) => a.name);
    expect(names).not.toContain('__proto__');
    expect(names).toContain('Proto');
  });

  it('refuses a name of digits only for a field, a model field or a group type (400 naming name): requests take the id first', async () => {
    // A field named "3" could not be set by name where field 3 exists, and a client sending the
    // card JSON's keys back would write field 3 instead.
    const refused = (res: { body: { errors?: Array<{ field: string; message: string }> } }) =>
      expect(res.body.errors).toEqual([{ field: 'name', message: expect.stringContaining('only digits') }]);
    refused(await create(ann, w.project, { name: '3', type: 'text' }).expect(400));
    refused(await create(ann, w.project, { name: ' 2024 ', type: 'number' }).expect(400));
    const f = (await create(ann, w.project, { name: 'Year 2024', type: 'text' }).expect(201)).body as AttributeJson;
    refused(await update(ann, f.id, { name: '2024' }).expect(400));
    const model = (await t.http.post(`${API}/projects/${w.project}/models`).set(as(ann)).send({ name: '2025' }).expect(201)).body;
    refused(await t.http.post(`${API}/models/${model.id}/attributes`).set(as(ann)).send({ name: '7', type: 'text' }).expect(400));
    const groupType = await t.http.post(`${API}/projects/${w.project}/group-types`).set(as(ann)).send({ name: '2026' }).expect(400);
    expect(groupType.body.detail).toContain('only digits');
    const names = ((await attrs(ann, w.project).expect(200)).body as AttributeJson[]).map((a) => a.name);
    expect(names.filter((n) => /^\d+$/.test(n))).toEqual([]);
    expect(names).toContain('Year 2024');
  });

  it("keeps the values of fields named as Object.prototype's members (constructor, toString, …) on card creation, and checks them", async () => {
    // Nest's pipe deleted `constructor` and `prototype` from the body's objects, and class-transformer
    // left out `toString`, `valueOf` and the like: card creation answered 201 with those values lost.
    const names = ['constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
    const p = await c.world(ann, 'Prototype names');
    for (const name of names) await create(ann, p.project, { name, type: 'text' }).expect(201);
    await create(ann, p.project, { name: 'isPrototypeOf', type: 'number' }).expect(201);
    const top = p.root;
    const attributes = Object.fromEntries(names.map((name) => [name, `kept ${name}`]));
    const made = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'c', attributes: { ...attributes, isPrototypeOf: 3 } }).expect(201);
    expect(made.body.attributes).toEqual({ ...attributes, isPrototypeOf: 3 });
    const read = await t.http.get(`${API}/cards/${made.body.id}`).set(as(ann)).expect(200);
    expect(read.body.attributes).toEqual({ ...attributes, isPrototypeOf: 3 });
    // A bad value under such a name is refused like any other, creating nothing.
    const bad = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'd', attributes: { isPrototypeOf: 'many' } }).expect(400);
    expect(JSON.stringify(bad.body.errors)).toContain('isPrototypeOf');
    const only = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'e', attributes: { constructor: 'alone' } }).expect(201);
    expect(only.body.attributes.constructor).toBe('alone');
    const cards = (await t.http.get(`${API}/projects/${p.project}/cards`).set(as(ann)).expect(200)).body as { title: string }[];
    expect(cards.map((x) => x.title)).toEqual(['c', 'e']);
  });

  it('keeps date options consistent with stored values', async () => {
    const f = (await create(ann, w.project, { name: 'When', type: 'date' }).expect(201)).body as AttributeJson;
    expect((await update(ann, f.id, { options: { period: true } }).expect(200)).body.options).toEqual({ period: true });
    expect((await update(ann, f.id, { options: {} }).expect(200)).body.options).toEqual({});
    const card = await c.card(ann, w.root, 'dated', { When: '2024-05-01' });
    expect(card.attributes.When).toBe('2024-05-01');
    expect((await update(ann, f.id, { options: { time: true } }).expect(200)).body.options).toEqual({ time: true });
    await c.set(ann, card.id, 'When', '2024-05-01 08:00:00').expect(200);
    expect((await update(ann, f.id, { options: { period: true, time: true } }).expect(409)).body.type).toBe('FIELDS.FIELD_HAS_VALUES');
    await update(ann, f.id, { options: {} }).expect(409);
    expect((await c.get(ann, card.id)).attributes.When).toBe('2024-05-01T08:00:00');
  });

  it('DELETE removes the field and its values (200 naming it)', async () => {
    const f = (await create(ann, w.project, { name: 'Temp', type: 'number' }).expect(201)).body as AttributeJson;
    const card = await c.card(ann, w.root, 'temp', { Temp: 1 });
    await t.http.delete(`${API}/attributes/${f.id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/attributes/${f.id}`).set(as(ann)).expect(404);
    expect((await c.get(ann, card.id)).attributes).not.toHaveProperty('Temp');
    await create(ann, w.project, { name: 'Temp', type: 'text' }).expect(201);
    expect((await c.get(ann, card.id)).attributes.Temp).toBeNull();
  });

  it('viewers read but cannot define fields (403)', async () => {
    const [f] = (await attrs(vic, w.project).expect(200)).body as AttributeJson[];
    await create(vic, w.project, { name: 'Nope', type: 'text' }).expect(403);
    await update(vic, f.id, { name: 'Nope' }).expect(403);
    await t.http.delete(`${API}/attributes/${f.id}`).set(as(vic)).expect(403);
  });

  it("hides another team's projects and fields (404), never changing them", async () => {
    await attrs(ann, evil.project).expect(404);
    await create(ann, evil.project, { name: 'Mine', type: 'text' }).expect(404);
    await t.http.get(`${API}/attributes/${evilField.id}`).set(as(ann)).expect(404);
    await update(ann, evilField.id, { name: 'Pwned' }).expect(404);
    await t.http.delete(`${API}/attributes/${evilField.id}`).set(as(ann)).expect(404);
    expect((await t.http.get(`${API}/attributes/${evilField.id}`).set(as(eve)).expect(200)).body.name).toBe('Evil field');
    await attrs(ann, 99999999).expect(404);
    await t.http.get(`${API}/attributes/abc`).set(as(ann)).expect(404);
    await t.http.put(`${API}/attributes/0`).set(as(ann)).send({ name: 'x' }).expect(404);
  });

  describe('group_type fields (owned by group types through FieldsApi)', () => {
    let api: FieldsApi;
    beforeAll(() => {
      api = t.app.get(FieldsApi);
    });

    it('are created, renamed and removed only through the API, and listed with group_type_id', async () => {
      const id = await api.createGroupTypeField({ projectId: w.project, groupTypeId: 9001, name: 'Status' });
      let list = (await attrs(ann, w.project).expect(200)).body as AttributeJson[];
      expect(list.find((a) => a.id === id)).toEqual({
        id,
        name: 'Status',
        type: 'group_type',
        project_id: w.project,
        model_id: null,
        options: {},
        group_type_id: 9001,
      });
      let res = await update(ann, id, { name: 'Renamed' }).expect(400);
      expect(res.body.detail).toMatch(/grouping operations/);
      res = await t.http.delete(`${API}/attributes/${id}`).set(as(ann)).expect(400);
      expect(res.body.detail).toMatch(/grouping operations/);

      await api.renameGroupTypeField(9001, 'Stage');
      list = (await attrs(ann, w.project).expect(200)).body as AttributeJson[];
      expect(list.find((a) => a.id === id)!.name).toBe('Stage');
      await api.deleteGroupTypeField(9001);
      await t.http.get(`${API}/attributes/${id}`).set(as(ann)).expect(404);
    });

    it('share the name space of the project: 409 both ways', async () => {
      await expect(api.createGroupTypeField({ projectId: w.project, groupTypeId: 9002, name: 'ESTIMATE' })).rejects.toMatchObject({
        kind: 'conflict',
      });
      await api.createGroupTypeField({ projectId: w.project, groupTypeId: 9003, name: 'Labels' });
      await create(ann, w.project, { name: 'labels', type: 'text' }).expect(409);
      await expect(api.renameGroupTypeField(9003, 'Owner')).rejects.toMatchObject({ kind: 'conflict' });
    });
  });

  it('deleting the project removes its fields and models', async () => {
    const p = await c.project(ann, w.org, 'Short-lived');
    const f = await c.field(ann, p.project, 'Gone', 'text');
    const m = (await t.http.post(`${API}/projects/${p.project}/models`).set(as(ann)).send({ name: 'M' }).expect(201)).body;
    await t.http.delete(`${API}/projects/${p.project}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/attributes/${f.id}`).set(as(ann)).expect(404);
    await t.http.get(`${API}/models/${m.id}/attributes`).set(as(ann)).expect(404);
  });

  it('documents the endpoints in the OpenAPI document', async () => {
    const spec = (await t.http.get(`${API}/spec.json`).expect(200)).body as { paths: Record<string, object> };
    for (const p of [
      '/api/1.0/attribute-types',
      '/api/1.0/projects/{id}/attributes',
      '/api/1.0/attributes/{id}',
      '/api/1.0/projects/{id}/models',
      '/api/1.0/models/{id}/attributes',
      '/api/1.0/cards/{id}/attributes',
      '/api/1.0/cards/{id}/attributes/{attr}',
      '/api/1.0/cards/{id}/attributes/{attr}/append',
      '/api/1.0/cards/{id}/attributes/{attr}/pop',
      '/api/1.0/cards/{id}/attributes/{attr}/choices',
      '/api/1.0/cards/{id}/model',
      '/api/1.0/files/{id}',
    ]) {
      expect(spec.paths).toHaveProperty([p]);
    }
  });
});
