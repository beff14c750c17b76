import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Response, Test } from 'supertest';
import type { Scope } from '../../../src/shared/domain/actor.js';
import { pkce, tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';

// The OpenAPI document must be true enough that a client generated from it
// works: every operation is called once with a valid request (Basic, as the
// original's clients send the key), and its real answer is checked against
// the schema the document gives for that status and media type; every
// authenticated operation lists the credentials the guard takes, with the
// scope it enforces, which a token one step short of it proves (403).

interface MediaObject {
  schema?: object;
}
interface ResponseObject {
  description: string;
  content?: Record<string, MediaObject>;
}
interface OperationObject {
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; schema?: Record<string, unknown> }>;
  requestBody?: { required?: boolean; content: Record<string, MediaObject> };
  responses: Record<string, ResponseObject>;
}
interface Document {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const PUBLIC = new Set([`GET ${API}/health`, `GET ${API}/ready`]);
const CALLBACK = 'http://127.0.0.1:8765/callback';
/** The scope one step short of each: a token holding only it must be refused. */
const SHORT_OF: Partial<Record<Scope, Scope>> = { read_workspace: 'read_user', write_workspace: 'read_workspace' };

/** `GET /api/1.0/cards/{id}` for each operation of the document. */
const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));

/** A validator of the document's schemas: its `#/components/…` references resolve in the document. */
function schemaValidator(doc: Document): (schema: object) => ValidateFunction {
  // strict: false lets the OpenAPI keywords (example, nullable's siblings) through; `nullable` itself is Ajv's.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const cache = new Map<string, ValidateFunction>();
  return (schema) => {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
    if (!cache.has(text)) cache.set(text, ajv.compile(JSON.parse(text) as object));
    return cache.get(text)!;
  };
}

describe('the OpenAPI document tells the truth', () => {
  let t: TestApp;
  let doc: Document;
  let validatorOf: (schema: object) => ValidateFunction;
  let u: TestUser;
  let basic: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    doc = (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
    validatorOf = schemaValidator(doc);
    u = await t.user();
    basic = { Authorization: `Basic ${Buffer.from(`${u.apiKey}:`).toString('base64')}` };
  });
  afterAll(() => t.close());

  /**
   * Where the real answer disagrees with the document: a status it does not
   * list, a media type it does not name, or a body its schema refuses.
   */
  function disagreements(name: string, res: Response): string[] {
    const [method, path] = name.split(' ');
    const documented = doc.paths[path]?.[method.toLowerCase()]?.responses[String(res.status)];
    if (!documented) return [`${name}: answered ${res.status}, which the document does not list`];
    const type = String(res.headers['content-type'] ?? '').split(';')[0];
    const media = documented.content?.[type] ?? documented.content?.['*/*'];
    if (!media?.schema) return [`${name}: answered ${res.status} ${type || 'without a type'}, the document gives no schema for it: ${JSON.stringify(documented)}`];
    if (!type.endsWith('json')) return [];
    const validate = validatorOf(media.schema);
    if (validate(res.body)) return [];
    return [`${name} ${res.status}: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${JSON.stringify(res.body).slice(0, 300)}`];
  }

  it('describes the answer of every operation, for a valid request of each (sent with Basic)', async () => {
    const http = t.http;
    const post = (path: string, body?: object) => http.post(`${API}${path}`).set(basic).send(body);
    const made = async (path: string, body: object) => (await post(path, body).expect((r) => expect(r.status).toBeLessThan(300))).body;
    const other = await t.user();
    const leaver = await t.user();
    const org = await made('/organizations', { name: 'Truth' });
    await made(`/organizations/${org.id}/members`, { user: `@${leaver.username}`, role: 'member' });
    const project = await made(`/organizations/${org.id}/projects`, { title: 'Doc' });
    const spareProject = await made(`/organizations/${org.id}/projects`, { title: 'Spare' });
    const top = project.top_level_card_id as number;
    const card = await made(`/cards/${top}/children`, { title: 'Alpha' });
    const spareCard = await made(`/cards/${top}/children`, { title: 'Beta' });
    await made(`/projects/${project.id}/attributes`, { name: 'Estimate', type: 'number' });
    await made(`/projects/${project.id}/attributes`, { name: 'Files', type: 'files' });
    await made(`/projects/${project.id}/attributes`, { name: 'Due', type: 'date', options: { period: true } });
    const spareField = await made(`/projects/${project.id}/attributes`, { name: 'Spare', type: 'text' });
    const model = await made(`/projects/${project.id}/models`, { name: 'Bug' });
    const type = await made(`/projects/${project.id}/group-types`, { name: 'Labels', one_group_per_card: false });
    const spareType = await made(`/projects/${project.id}/group-types`, { name: 'Spare type' });
    const group = await made(`/cards/${top}/groups`, { type_id: type.id, title: 'Red' });
    const spareGroup = await made(`/cards/${top}/groups`, { type_id: type.id, title: 'Blue' });
    await made(`/cards/${card.id}/add-to-group`, { group_id: spareGroup.id });
    const withFile = await made(`/cards/${card.id}/attributes/Files/append`, { value: { name: 'note.txt', data: 'hello' } });
    const fileId = withFile.attributes.Files[0].id as number;
    const spareKey = await made('/me/api-keys', { name: 'spare' });
    const csv = Buffer.from('title,estimate\nOne,1\nTwo,2\n');
    const discovered = async () => (await http.post(`${API}/importers/spreadsheet/discover`).set(basic).attach('file', csv, 'rows.csv').expect(201)).body;
    const uploaded = await discovered();
    const spareUpload = await discovered();
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', name: 'Estimate', attr_type: 'number' } };

    const calls: Array<[string, () => Test]> = [
      [`GET ${API}/health`, () => http.get(`${API}/health`)],
      [`GET ${API}/ready`, () => http.get(`${API}/ready`)],
      [`GET ${API}/me`, () => http.get(`${API}/me`).set(basic)],
      [`GET ${API}/me/api-keys`, () => http.get(`${API}/me/api-keys`).set(basic)],
      // No body at all: the document says none is required.
      [`POST ${API}/me/api-keys`, () => http.post(`${API}/me/api-keys`).set(basic)],
      [`DELETE ${API}/me/api-keys/{id}`, () => http.delete(`${API}/me/api-keys/${spareKey.id}`).set(basic)],
      [`GET ${API}/organizations`, () => http.get(`${API}/organizations`).set(basic).query({ page: 1, per_page: 1000 })],
      // Form fields, as the document lists beside JSON.
      [`POST ${API}/organizations`, () => http.post(`${API}/organizations`).set(basic).type('form').send({ name: 'Formed' })],
      [`GET ${API}/organizations/{id}`, () => http.get(`${API}/organizations/${org.id}`).set(basic)],
      [`GET ${API}/organizations/{id}/members`, () => http.get(`${API}/organizations/${org.id}/members`).set(basic)],
      [`POST ${API}/organizations/{id}/members`, () => post(`/organizations/${org.id}/members`, { user: other.id, role: 'member' })],
      [`PUT ${API}/organizations/{id}/members/{userId}`, () => http.put(`${API}/organizations/${org.id}/members/${other.id}`).set(basic).send({ role: 'viewer' })],
      [`DELETE ${API}/organizations/{id}/members/{userId}`, () => http.delete(`${API}/organizations/${org.id}/members/${leaver.id}`).set(basic)],
      [`GET ${API}/organizations/{id}/projects`, () => http.get(`${API}/organizations/${org.id}/projects`).set(basic)],
      [`POST ${API}/organizations/{id}/projects`, () => post(`/organizations/${org.id}/projects`, { title: 'New' })],
      [`GET ${API}/projects/all`, () => http.get(`${API}/projects/all`).set(basic)],
      [`GET ${API}/projects/{id}`, () => http.get(`${API}/projects/${project.id}`).set(basic)],
      [`DELETE ${API}/projects/{id}`, () => http.delete(`${API}/projects/${spareProject.id}`).set(basic)],
      [`GET ${API}/cards/{id}/stream`, () => http.get(`${API}/cards/${card.id}/stream`).set(basic)],
      [`POST ${API}/cards/{id}/comments`, () => post(`/cards/${card.id}/comments`, { content: 'Looks right' })],
      [`GET ${API}/attribute-types`, () => http.get(`${API}/attribute-types`).set(basic)],
      [`GET ${API}/projects/{id}/attributes`, () => http.get(`${API}/projects/${project.id}/attributes`).set(basic)],
      [`POST ${API}/projects/{id}/attributes`, () => post(`/projects/${project.id}/attributes`, { name: 'Notes', type: 'content' })],
      [`GET ${API}/attributes/{id}`, () => http.get(`${API}/attributes/${spareField.id}`).set(basic)],
      [`PUT ${API}/attributes/{id}`, () => http.put(`${API}/attributes/${spareField.id}`).set(basic).send({ name: 'Spare field' })],
      [`DELETE ${API}/attributes/{id}`, () => http.delete(`${API}/attributes/${spareField.id}`).set(basic)],
      [`GET ${API}/projects/{id}/models`, () => http.get(`${API}/projects/${project.id}/models`).set(basic)],
      [`POST ${API}/projects/{id}/models`, () => post(`/projects/${project.id}/models`, { name: 'Story' })],
      [`GET ${API}/models/{id}`, () => http.get(`${API}/models/${model.id}`).set(basic)],
      [`POST ${API}/models/{id}/attributes`, () => post(`/models/${model.id}/attributes`, { name: 'Severity', type: 'number' })],
      [`GET ${API}/models/{id}/attributes`, () => http.get(`${API}/models/${model.id}/attributes`).set(basic)],
      [`GET ${API}/files/{id}`, () => http.get(`${API}/files/${fileId}`).set(basic)],
      [`GET ${API}/cards/{id}/groups`, () => http.get(`${API}/cards/${card.id}/groups`).set(basic)],
      [`POST ${API}/cards/{id}/groups`, () => post(`/cards/${top}/groups`, { type_id: type.id, title: 'Green' })],
      [`GET ${API}/group-types/{id}/groups`, () => http.get(`${API}/group-types/${type.id}/groups`).set(basic)],
      [`GET ${API}/groups/{id}`, () => http.get(`${API}/groups/${group.id}`).set(basic)],
      [`PUT ${API}/groups/{id}`, () => http.put(`${API}/groups/${group.id}`).set(basic).send({ title: 'Crimson' })],
      [`GET ${API}/cards/{id}`, () => http.get(`${API}/cards/${card.id}`).set(basic)],
      [`PUT ${API}/cards/{id}`, () => http.put(`${API}/cards/${card.id}`).set(basic).send({ title: 'Alpha 2' })],
      [`GET ${API}/cards/{id}/children`, () => http.get(`${API}/cards/${top}/children`).set(basic)],
      [`POST ${API}/cards/{id}/children`, () => post(`/cards/${card.id}/children`, { title: 'Child', attributes: { Estimate: 2 } })],
      [`POST ${API}/cards/{id}/state`, () => post(`/cards/${card.id}/state`, { state: 'in_progress' })],
      [`POST ${API}/cards/{id}/archive`, () => post(`/cards/${spareCard.id}/archive`)],
      [`DELETE ${API}/cards/{id}/archive`, () => http.delete(`${API}/cards/${spareCard.id}/archive`).set(basic)],
      // No body at all: the document says none is required.
      [`POST ${API}/cards/{id}/relocate`, () => post(`/cards/${spareCard.id}/relocate`)],
      [`GET ${API}/projects/{id}/cards`, () => http.get(`${API}/projects/${project.id}/cards`).set(basic).query({ with_archived: 'TRUE' })],
      [`POST ${API}/cards/{id}/attributes`, () => post(`/cards/${card.id}/attributes`, { Estimate: 3, Due: { start: '2026-01-01', end: '2026-01-05' } })],
      [`POST ${API}/cards/{id}/attributes/{attr}`, () => post(`/cards/${card.id}/attributes/Estimate`, { value: 5 })],
      [`POST ${API}/cards/{id}/attributes/{attr}/append`, () => post(`/cards/${card.id}/attributes/Files/append`, { value: { name: 'more.txt', data: 'again' } })],
      [`POST ${API}/cards/{id}/attributes/{attr}/pop`, () => post(`/cards/${card.id}/attributes/Files/pop`)],
      [`GET ${API}/cards/{id}/attributes/{attr}/choices`, () => http.get(`${API}/cards/${card.id}/attributes/Labels/choices`).set(basic)],
      [`POST ${API}/cards/{id}/model`, () => post(`/cards/${card.id}/model`, { model_id: model.id })],
      [`POST ${API}/cards/{id}/add-to-group`, () => post(`/cards/${card.id}/add-to-group`, { group_id: group.id })],
      [`POST ${API}/cards/{id}/remove-from-group`, () => post(`/cards/${card.id}/remove-from-group`, { group_id: group.id })],
      [`POST ${API}/cards/{id}/remove-from-group-type`, () => post(`/cards/${card.id}/remove-from-group-type`, { type_id: type.id })],
      [`GET ${API}/projects/{id}/group-types`, () => http.get(`${API}/projects/${project.id}/group-types`).set(basic)],
      [`POST ${API}/projects/{id}/group-types`, () => post(`/projects/${project.id}/group-types`, { name: 'Columns', one_group_per_card: true })],
      [`GET ${API}/group-types/{id}`, () => http.get(`${API}/group-types/${type.id}`).set(basic)],
      [`PUT ${API}/group-types/{id}`, () => http.put(`${API}/group-types/${type.id}`).set(basic).send({ name: 'Tags' })],
      [`GET ${API}/search`, () => http.get(`${API}/search`).set(basic).query({ filter: 'alpha' })],
      [`POST ${API}/importers/spreadsheet/discover`, () => http.post(`${API}/importers/spreadsheet/discover`).set(basic).attach('file', csv, 'rows.csv')],
      [`POST ${API}/importers/spreadsheet/import`, () => post('/importers/spreadsheet/import', { discover_file_id: uploaded.file_id, project_id: project.id, mapping, options: { ignore_header: true } })],
      // Deletions last: what they delete, other calls used.
      [`DELETE ${API}/groups/{id}`, () => http.delete(`${API}/groups/${spareGroup.id}`).set(basic)],
      [`DELETE ${API}/group-types/{id}`, () => http.delete(`${API}/group-types/${spareType.id}`).set(basic)],
      [`DELETE ${API}/cards/{id}`, () => http.delete(`${API}/cards/${spareCard.id}`).set(basic)],
      [`DELETE ${API}/importers/spreadsheet/files/{fileId}`, () => http.delete(`${API}/importers/spreadsheet/files/${spareUpload.file_id}`).set(basic)],
    ];
    const documented = operationsOf(doc).map((o) => o.name);
    expect(documented.filter((name) => !calls.some(([called]) => called === name))).toEqual([]);

    const wrong: string[] = [];
    for (const [name, call] of calls) {
      const res = await call();
      if (res.status >= 300) wrong.push(`${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      wrong.push(...disagreements(name, res));
    }
    // The other forms of the same operations: ids only (any case), and the importer's row errors.
    const more: Array<[string, () => Test]> = [
      [`GET ${API}/projects/{id}/cards`, () => http.get(`${API}/projects/${project.id}/cards`).set(basic).query({ only_ids: 'True' })],
      [`GET ${API}/projects/{id}/cards`, () => http.get(`${API}/projects/${project.id}/cards`).set(basic).query({ filter: 'Estimate >= 1', only_ids: '0' })],
      [`GET ${API}/search`, () => http.get(`${API}/search`).set(basic).query({ only_ids: '1' })],
      [`GET ${API}/cards/{id}/children`, () => http.get(`${API}/cards/${top}/children`).set(basic).query({ only_ids: 'true' })],
    ];
    for (const [name, call] of more) {
      const res = await call();
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      wrong.push(...disagreements(name, res));
    }
    const rows = await discovered();
    const bad = await post('/importers/spreadsheet/import', {
      discover_file_id: rows.file_id,
      project_id: project.id,
      mapping: { '0': { type: 'title' }, '1': { type: 'ref' } },
    });
    expect({ status: bad.status, type: bad.body.type, first: bad.body.errors?.[0] }).toEqual({
      status: 400,
      type: 'IMPORT.ROWS_INVALID',
      first: expect.objectContaining({ row: expect.any(Number), column: 1 }),
    });
    wrong.push(...disagreements(`POST ${API}/importers/spreadsheet/import`, bad));
    expect(wrong).toEqual([]);
  });

  it('says an update needs one property at least, which the server requires', async () => {
    const org = (await t.http.post(`${API}/organizations`).set(basic).send({ name: 'Updates' }).expect(201)).body;
    const project = (await t.http.post(`${API}/organizations/${org.id}/projects`).set(basic).send({ title: 'P' }).expect(201)).body;
    const field = (await t.http.post(`${API}/projects/${project.id}/attributes`).set(basic).send({ name: 'F', type: 'text' }).expect(201)).body;
    const type = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(basic).send({ name: 'T' }).expect(201)).body;
    const group = (await t.http.post(`${API}/cards/${project.top_level_card_id}/groups`).set(basic).send({ type_id: type.id, title: 'G' }).expect(201)).body;
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(basic).send({ title: 'C' }).expect(201)).body;
    for (const [path, url] of [
      ['/cards/{id}', `/cards/${card.id}`],
      ['/groups/{id}', `/groups/${group.id}`],
      ['/group-types/{id}', `/group-types/${type.id}`],
      ['/attributes/{id}', `/attributes/${field.id}`],
    ]) {
      const put = doc.paths[`${API}${path}`].put;
      const ref = (put.requestBody!.content['application/json'].schema as { $ref: string }).$ref;
      expect({ path, minProperties: doc.components.schemas[ref.split('/').pop()!].minProperties }).toEqual({ path, minProperties: 1 });
      const res = await t.http.put(`${API}${url}`).set(basic).send({});
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(disagreements(`PUT ${API}${path}`, res)).toEqual([]);
    }
  });

  it('states the inputs as the server reads them: integer ids, paging bounds, the filter cap, form bodies', () => {
    const ops = operationsOf(doc);
    const param = (name: string, where: string, p: string) => ops.find((o) => o.name === name)!.op.parameters!.find((x) => x.in === where && x.name === p)!.schema;
    for (const { name, op } of ops) {
      for (const p of (op.parameters ?? []).filter((x) => x.in === 'path' && x.name !== 'attr')) {
        expect({ name, p: p.name, schema: p.schema }).toEqual({ name, p: p.name, schema: { type: 'integer', minimum: 1, maximum: 2 ** 53 - 1 } });
      }
      const content = op.requestBody?.content ?? {};
      if ('application/json' in content) expect({ name, form: Object.keys(content) }).toEqual({ name, form: expect.arrayContaining(['application/x-www-form-urlencoded']) });
    }
    for (const listing of [`GET ${API}/projects/{id}/cards`, `GET ${API}/search`, `GET ${API}/organizations`]) {
      expect(param(listing, 'query', 'page')).toMatchObject({ type: 'integer', minimum: 1, maximum: 1_000_000_000 });
      expect(param(listing, 'query', 'per_page')).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    }
    expect(param(`GET ${API}/search`, 'query', 'filter')).toMatchObject({ maxLength: 4000 });
    expect(param(`GET ${API}/projects/{id}/cards`, 'query', 'only_ids')).toMatchObject({ type: 'boolean' });
    expect(ops.find((o) => o.name === `GET ${API}/files/{id}`)!.op.responses['200'].content).toHaveProperty(['*/*']);
  });

  it('states every id the server gives as it gives them: an integer from 1 to 2^53-1', () => {
    const ID = { type: 'integer', minimum: 1, maximum: 2 ** 53 - 1 };
    const wrong: string[] = [];
    const seen = new Set<string>();
    // Every property named id or *_id (an array of ids: its items), following references into the components.
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      const ref = (node as { $ref?: string }).$ref;
      if (ref && !seen.has(ref)) {
        seen.add(ref);
        walk(doc.components.schemas[ref.split('/').pop()!], ref);
      }
      const properties = (node as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
      for (const [name, schema] of Object.entries(properties)) {
        if (!/^(id|.+_id)s?$/.test(name)) continue;
        const id = name.endsWith('s') ? (schema.items as Record<string, unknown>) : schema;
        const { type, minimum, maximum } = id ?? {};
        if (JSON.stringify({ type, minimum, maximum }) !== JSON.stringify(ID)) wrong.push(`${at}.${name}: ${JSON.stringify(schema)}`);
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${at}.${key}`);
    };
    for (const { name, op } of operationsOf(doc)) walk(op.responses, name);
    // The importer's body names the ids its answers gave.
    walk(doc.paths[`${API}/importers/spreadsheet/import`].post.requestBody, 'import body');
    expect(seen.size).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
    for (const name of ['AttributeDto', 'ModelDto']) expect(doc.components.schemas[name].properties).toMatchObject({ id: ID, project_id: ID });
  });

  it("documents the importer's attr_type as the types its mapping takes", async () => {
    const body = doc.paths[`${API}/importers/spreadsheet/import`].post.requestBody!.content['application/json'].schema as Record<string, any>;
    const documented = body.properties.mapping.additionalProperties.properties.attr_type.enum as string[];
    expect(documented).toEqual(expect.arrayContaining(['members', 'relationships', 'likes', 'group_type', 'text']));
    // Each is taken by the mapping's check: a dry run answers 200, and a type not listed is a 400 naming attr_type.
    const org = (await t.http.post(`${API}/organizations`).set(basic).send({ name: 'Import types' }).expect(201)).body;
    const project = (await t.http.post(`${API}/organizations/${org.id}/projects`).set(basic).send({ title: 'P' }).expect(201)).body;
    const csv = Buffer.from('title,value\nOne,\n');
    const tryType = async (attrType: string) => {
      const upload = (await t.http.post(`${API}/importers/spreadsheet/discover`).set(basic).attach('file', csv, 'rows.csv').expect(201)).body;
      const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', name: `F ${attrType}`, attr_type: attrType } };
      return t.http.post(`${API}/importers/spreadsheet/import`).set(basic).send({ discover_file_id: upload.file_id, project_id: project.id, mapping, dry_run: true, options: { ignore_header: true } });
    };
    for (const attrType of documented.filter((x) => x !== 'group_type')) {
      const res = await tryType(attrType);
      expect({ attrType, status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ attrType, status: 200, body: null });
    }
    const refused = await tryType('files');
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.errors)).toMatch(/attr_type/);
  });

  describe('credentials', () => {
    let ann: WebUser;
    let client: RegisteredApp;
    const tokens = {} as Record<Scope, string>;

    beforeAll(async () => {
      ann = webUser(t);
      await ann.signUp('truthful');
      client = await ann.registerApp([CALLBACK], 'public');
      for (const scope of ['read_user', 'read_workspace', 'write_workspace'] as Scope[]) {
        const { verifier, challenge } = pkce();
        const code = await ann.code({ response_type: 'code', client_id: client.clientId, redirect_uri: CALLBACK, scope, code_challenge: challenge, code_challenge_method: 'S256' });
        const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: client.clientId, code_verifier: verifier }).expect(200);
        tokens[scope] = res.body.access_token as string;
      }
    });

    const call = (name: string, token: string) => {
      const [method, path] = name.split(' ');
      const url = path.replace(/\{(\w+)\}/g, (_m, p: string) => (p === 'attr' ? 'x' : '999999'));
      return t.http[method.toLowerCase() as 'get'](url).set('Authorization', `Bearer ${token}`);
    };

    it('lists Basic, X-Api-Key and the OAuth scope the server enforces on every authenticated operation', async () => {
      const wrong: string[] = [];
      for (const { name, op } of operationsOf(doc)) {
        if (PUBLIC.has(name)) {
          if (op.security?.length) wrong.push(`${name}: public, but documents ${JSON.stringify(op.security)}`);
          continue;
        }
        const oauth = op.security?.find((s) => 'oauth2' in s)?.oauth2;
        const expected = [{ basic: [] }, { api_key: [] }, ...(oauth ? [{ oauth2: oauth }] : [])];
        if (JSON.stringify(op.security) !== JSON.stringify(expected) || (oauth && oauth.length !== 1)) {
          wrong.push(`${name}: security ${JSON.stringify(op.security)}`);
          continue;
        }
        const needed = (oauth?.[0] ?? 'api_key') as Scope | 'api_key';
        // One step short of the documented scope is refused, naming it; the documented scope passes the guard.
        const short = needed === 'api_key' ? 'write_workspace' : SHORT_OF[needed];
        if (short) {
          const refused = await call(name, tokens[short]);
          if (refused.status !== 403 || refused.body.required_scope !== needed) wrong.push(`${name} with ${short}: ${refused.status} ${JSON.stringify(refused.body)}`);
          else wrong.push(...disagreements(name, refused));
        }
        if (needed !== 'api_key') {
          const passed = await call(name, tokens[needed]);
          if (passed.status === 401 || passed.status === 403) wrong.push(`${name} with ${needed}: ${passed.status} ${JSON.stringify(passed.body)}`);
        }
      }
      expect(wrong).toEqual([]);
    });
  });
});
