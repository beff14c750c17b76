import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Test } from 'supertest';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';

// The request side of the OpenAPI document, as a generated client reads it
// (openapi-typescript + openapi-fetch, @hey-api/openapi-ts): what its types
// allow the server takes, and what the server refuses its types do not allow.
// openapi-inputs.ts states it for every request body; the answer side is
// openapi-truth.e2e-spec.ts.

type Schema = Record<string, any>;
interface Media {
  schema?: Schema;
  encoding?: Record<string, { contentType?: string }>;
}
interface Operation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, Media> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';
const ID = { type: 'integer', minimum: 1, maximum: 2 ** 53 - 1 };

describe('the OpenAPI document states the requests the server takes', () => {
  let t: TestApp;
  let doc: Document;
  let u: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    doc = (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
    u = await t.user();
    other = await t.user();
  });
  afterAll(() => t.close());

  const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? doc.components.schemas[String(s.$ref).split('/').pop()!] : s);
  const media = (method: string, path: string, type: string): Media => doc.paths[`${API}${path}`][method].requestBody!.content[type];
  /** Every request body of the document: operation, media type, resolved schema. */
  const bodies = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        Object.entries(op.requestBody?.content ?? {}).map(([type, m]) => ({ name: `${method.toUpperCase()} ${path}`, method, path, type, media: m, schema: resolve(m.schema)! })),
      ),
    );

  /**
   * A form body as a generator serialises it from the document: a property
   * whose encoding is application/json as JSON text, any other as its text.
   */
  function formOf(method: string, path: string, body: Record<string, unknown>): Record<string, string> {
    const encoding = media(method, path, FORM).encoding ?? {};
    return Object.fromEntries(
      Object.entries(body).map(([k, v]) => {
        if (encoding[k]?.contentType === 'application/json') return [k, JSON.stringify(v)];
        if (typeof v === 'object') throw new Error(`${method} ${path} ${k}: an object, and the document gives it no JSON encoding`);
        return [k, String(v)];
      }),
    );
  }

  async function world() {
    const post = async (path: string, body: object) => {
      const res = await t.http.post(`${API}${path}`).set(as(u)).send(body);
      expect({ path, status: res.status < 300 ? 'ok' : res.body }).toEqual({ path, status: 'ok' });
      return res.body;
    };
    const org = await post('/organizations', { name: 'Requests' });
    await post(`/organizations/${org.id}/members`, { user: other.id, role: 'member' });
    const project = await post(`/organizations/${org.id}/projects`, { title: 'P' });
    const card = await post(`/cards/${project.top_level_card_id}/children`, { title: 'C' });
    const note = await post(`/projects/${project.id}/attributes`, { name: 'Note', type: 'text' });
    await post(`/projects/${project.id}/attributes`, { name: 'Estimate', type: 'number' });
    await post(`/projects/${project.id}/attributes`, { name: 'Files', type: 'files' });
    const model = await post(`/projects/${project.id}/models`, { name: 'Bug' });
    const type = await post(`/projects/${project.id}/group-types`, { name: 'Status' });
    const group = await post(`/cards/${project.top_level_card_id}/groups`, { type_id: type.id, title: 'Todo' });
    return { org, project, card, note, model, type, group };
  }

  it('takes in a form the JSON text of each object property the document encodes as JSON (options, attributes, mapping)', async () => {
    // Every object property of a form or multipart body is encoded as JSON text: a form cannot nest.
    const unencoded = bodies()
      .filter((b) => b.type === FORM || b.type === MULTIPART)
      .flatMap((b) => Object.entries(b.schema.properties ?? {}).filter(([, p]) => resolve(p as Schema)?.type === 'object').map(([k]) => ({ b, k })))
      .filter(({ b, k }) => b.media.encoding?.[k]?.contentType !== 'application/json')
      .map(({ b, k }) => `${b.name} ${b.type} ${k}`);
    expect(unencoded).toEqual([]);

    const { project, card, note, model } = await world();
    const send = (method: 'post' | 'put', template: string, url: string, body: Record<string, unknown>) =>
      t.http[method](`${API}${url}`).set(as(u)).type('form').send(formOf(method, template, body));
    // A date field with a time, by form (it was "options must be an object").
    const when = await send('post', '/projects/{id}/attributes', `/projects/${project.id}/attributes`, { name: 'When', type: 'date', options: { time: true } });
    expect({ status: when.status, options: when.body.options }).toEqual({ status: 201, options: { time: true } });
    const span = await send('post', '/models/{id}/attributes', `/models/${model.id}/attributes`, { name: 'Span', type: 'date', options: { period: true } });
    expect({ status: span.status, options: span.body.options }).toEqual({ status: 201, options: { period: true } });
    const changed = await send('put', '/attributes/{id}', `/attributes/${when.body.id}`, { options: { time: true, period: true } });
    expect({ status: changed.status, options: changed.body.options }).toEqual({ status: 200, options: { time: true, period: true } });
    // The form's options are checked as JSON ones are: an unknown option, or options on a text field, is a 400 naming it.
    const unknown = await send('put', '/attributes/{id}', `/attributes/${when.body.id}`, { options: { zone: true } });
    expect({ status: unknown.status, fields: unknown.body.errors?.map((e: { field: string }) => e.field) }).toEqual({ status: 400, fields: ['options.zone'] });
    const onText = await send('put', '/attributes/{id}', `/attributes/${note.id}`, { options: { time: true } });
    expect(onText.status).toBe(400);
    // A card's values, by form: `attributes` as JSON text, as on POST /cards/{id}/children.
    const child = await send('post', '/cards/{id}/children', `/cards/${card.id}/children`, { title: 'Child', attributes: { Note: 'hi2', Estimate: 2 } });
    expect({ status: child.status, attributes: child.body.attributes }).toEqual({ status: 201, attributes: expect.objectContaining({ Note: 'hi2', Estimate: 2 }) });
    const set = await send('post', '/cards/{id}/attributes', `/cards/${card.id}/attributes`, { attributes: { Note: 'hi3', Estimate: 3 } });
    expect({ status: set.status, attributes: set.body.attributes }).toEqual({ status: 200, attributes: expect.objectContaining({ Note: 'hi3', Estimate: 3 }) });
    // The spreadsheet importer: mapping and options as JSON text.
    const upload = (await t.http.post(`${API}/importers/spreadsheet/discover`).set(as(u)).attach('file', Buffer.from('title,n\nOne,1\n'), 'rows.csv').expect(201)).body;
    const imported = await send('post', '/importers/spreadsheet/import', '/importers/spreadsheet/import', {
      discover_file_id: upload.file_id,
      project_id: project.id,
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', name: 'Estimate', attr_type: 'number' } },
      options: { ignore_header: true },
      dry_run: true,
    });
    expect({ status: imported.status, created: imported.body.created }).toEqual({ status: 200, created: 1 });
  });

  it("sets a card's values from a form of either kind the document describes: `attributes` as JSON text, or <field>=<value> fields", async () => {
    const { card } = await world();
    const form = media('post', '/cards/{id}/attributes', FORM);
    expect(resolve(form.schema)).toMatchObject({ properties: { attributes: { type: 'object' } }, additionalProperties: true });
    expect(form.encoding).toEqual({ attributes: { contentType: 'application/json' } });
    const url = `${API}/cards/${card.id}/attributes`;
    const wrapped = await t.http.post(url).set(as(u)).type('form').send({ attributes: '{"Note":"hi3","Estimate":"4"}' });
    expect({ status: wrapped.status, attributes: wrapped.body.attributes }).toEqual({ status: 200, attributes: expect.objectContaining({ Note: 'hi3', Estimate: 4 }) });
    const flat = await t.http.post(url).set(as(u)).type('form').send({ Note: 'flat', Estimate: '5' });
    expect({ status: flat.status, attributes: flat.body.attributes }).toEqual({ status: 200, attributes: expect.objectContaining({ Note: 'flat', Estimate: 5 }) });
    // Either, never both (as in JSON), and text that is no JSON object stays a field named "attributes".
    const both = await t.http.post(url).set(as(u)).type('form').send({ attributes: '{"Note":"x"}', Estimate: '6' });
    expect(both.status).toBe(400);
    const notObject = await t.http.post(url).set(as(u)).type('form').send({ attributes: '["Note"]' });
    expect({ status: notObject.status, type: notObject.body.type }).toEqual({ status: 400, type: 'FIELDS.UNKNOWN_ATTRIBUTE' });
    // A JSON body is read as before: a string `attributes` is no wrapper.
    const jsonText = await t.http.post(url).set(as(u)).send({ attributes: '{"Note":"x"}' });
    expect({ status: jsonText.status, type: jsonText.body.type }).toEqual({ status: 400, type: 'FIELDS.UNKNOWN_ATTRIBUTE' });
    const after = (await t.http.get(`${API}/cards/${card.id}`).set(as(u)).expect(200)).body;
    expect(after.attributes).toMatchObject({ Note: 'flat', Estimate: 5 });
  });

  it('documents the multipart `value` as a file, which the server takes, and its text form', async () => {
    for (const path of ['/cards/{id}/attributes/{attr}', '/cards/{id}/attributes/{attr}/append']) {
      const multipart = media('post', path, MULTIPART);
      expect({ path, schema: multipart.schema }).toEqual({
        path,
        schema: expect.objectContaining({ required: ['value'], properties: { value: expect.objectContaining({ type: 'string', format: 'binary' }) } }),
      });
      expect({ path, example: multipart.schema?.example }).toEqual({ path, example: undefined });
      // The JSON body keeps its value of any type.
      expect(media('post', path, 'application/json').schema).toMatchObject({ properties: { value: {} }, example: { value: 3 } });
    }
    const { card } = await world();
    const file = Buffer.from('hello');
    const set = await t.http.post(`${API}/cards/${card.id}/attributes/Files`).set(as(u)).attach('value', file, 'a.txt');
    expect({ status: set.status, names: set.body.attributes?.Files?.map((f: { name: string }) => f.name) }).toEqual({ status: 200, names: ['a.txt'] });
    const appended = await t.http.post(`${API}/cards/${card.id}/attributes/Files/append`).set(as(u)).attach('value', file, 'b.txt');
    expect({ status: appended.status, names: appended.body.attributes?.Files?.map((f: { name: string }) => f.name) }).toEqual({ status: 200, names: ['a.txt', 'b.txt'] });
    const text = await t.http.post(`${API}/cards/${card.id}/attributes/Estimate`).set(as(u)).field('value', '7');
    expect({ status: text.status, value: text.body.attributes?.Estimate }).toEqual({ status: 200, value: 7 });
  });

  it('refuses every property a request body does not list, as the document says (additionalProperties: false)', async () => {
    const open = bodies().filter((b) => b.schema.additionalProperties !== false).map((b) => `${b.name} ${b.type}`);
    // Only the flat form of a card's values takes properties of its own naming (field names).
    expect(open.sort()).toEqual([`POST ${API}/cards/{id}/attributes application/json`, `POST ${API}/cards/{id}/attributes ${FORM}`]);

    const w = await world();
    const ids: Record<string, string> = {
      organizations: String(w.org.id),
      projects: String(w.project.id),
      cards: String(w.card.id),
      attributes: String(w.note.id),
      models: String(w.model.id),
      groups: String(w.group.id),
      'group-types': String(w.type.id),
      members: String(other.id),
      'api-keys': '1',
    };
    const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, (_m, offset: number) => (path.slice(0, offset).endsWith('/attributes/') && /^\/cards/.test(path.slice(API.length)) ? 'Note' : ids[path.slice(0, offset - 1).split('/').pop()!]));
    const named = new Set(bodies().filter((b) => b.schema.additionalProperties === false).map((b) => `${b.method} ${b.path}`));
    const wrong: string[] = [];
    for (const name of named) {
      const [method, path] = name.split(' ');
      const url = urlOf(path);
      let req: Test = t.http[method as 'post' | 'put'](url).set(as(u));
      const content = doc.paths[path][method].requestBody!.content;
      req = 'application/json' in content ? req.send({ zz_unknown: 1 }) : req.attach('file', Buffer.from('a,b\n1,2\n'), 'x.csv').field('zz_unknown', '1');
      const res = await req;
      const fields = (res.body.errors ?? []).map((e: { field: string }) => e.field);
      if (res.status !== 400 || !fields.includes('zz_unknown')) wrong.push(`${name} (${url}): ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(named.size).toBeGreaterThan(20);
    expect(wrong).toEqual([]);
    // Nested: a field's options are the date options only.
    for (const dto of ['CreateAttributeDto', 'UpdateAttributeDto']) {
      expect({ dto, options: doc.components.schemas[dto].properties.options }).toEqual({
        dto,
        options: expect.objectContaining({ type: 'object', properties: { time: expect.objectContaining({ type: 'boolean' }), period: expect.objectContaining({ type: 'boolean' }) }, additionalProperties: false }),
      });
    }
    const zone = await t.http.post(`${API}/projects/${w.project.id}/attributes`).set(as(u)).send({ name: 'Z', type: 'date', options: { zone: true } });
    expect(zone.status).toBe(400);
  });

  it('states every id a request body takes as an integer from 1 to 2^53-1, which the server requires', async () => {
    const wrong: string[] = [];
    let seen = 0;
    for (const b of bodies()) {
      for (const [name, p] of Object.entries(b.schema.properties ?? {})) {
        if (!/^(id|.+_id)$/.test(name)) continue;
        seen++;
        const { type, minimum, maximum } = resolve(p as Schema)!;
        if (JSON.stringify({ type, minimum, maximum }) !== JSON.stringify(ID)) wrong.push(`${b.name} ${b.type} ${name}: ${JSON.stringify(p)}`);
      }
    }
    expect(seen).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
    const { project, card } = await world();
    for (const [url, body] of [
      [`/cards/${project.top_level_card_id}/children`, { title: 'x', group_id: 0 }],
      [`/cards/${card.id}/relocate`, { parent_id: 0 }],
      [`/cards/${card.id}/add-to-group`, { group_id: 0 }],
      [`/cards/${project.top_level_card_id}/groups`, { type_id: 0, title: 'G' }],
      [`/cards/${card.id}/model`, { model_id: 0 }],
    ] as const) {
      const res = await t.http.post(`${API}${url}`).set(as(u)).send(body);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
    }
  });

  it('gives no `default` in a request body (generators would make the property required) but says it in words, and the server applies it', async () => {
    const withDefault: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${at}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      if ('default' in node) withDefault.push(at);
      const ref = (node as { $ref?: string }).$ref;
      if (ref) walk(resolve({ $ref: ref }), ref);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}.${k}`);
    };
    for (const b of bodies()) walk(b.media.schema, `${b.name} ${b.type}`);
    expect(withDefault).toEqual([]);
    const { schemas } = doc.components;
    expect(schemas.CreateGroupTypeDto.properties.one_group_per_card.description).toMatch(/default false/);
    expect(schemas.CreateGroupTypeDto.required).toEqual(['name']);
    expect(schemas.AddMemberDto.properties.role.description).toMatch(/default "member"/);
    expect(schemas.AddMemberDto.required).toEqual(['user']);
    const { org, project } = await world();
    const type = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(u)).send({ name: 'Plain' }).expect(201)).body;
    expect(type.one_group_per_card).toBe(false);
    const third = await t.user();
    await t.http.post(`${API}/organizations/${org.id}/members`).set(as(u)).send({ user: third.id }).expect((r) => expect(r.status).toBeLessThan(300));
    const members = (await t.http.get(`${API}/organizations/${org.id}/members`).set(as(u)).expect(200)).body as Array<{ user_id?: number; id?: number; role: string }>;
    expect(members.find((m) => (m.user_id ?? m.id) === third.id)?.role).toBe('member');
  });
});
