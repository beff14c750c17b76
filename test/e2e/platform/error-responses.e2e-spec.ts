import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response, Test } from 'supertest';
import { DataSource } from 'typeorm';
import { requestFingerprint } from '../../../src/modules/identity/infrastructure/idempotency-keys.store.js';
import { DrainState } from '../../../src/shared/http/draining.js';
import { minimalBody, type Schema } from '../../support/openapi.js';
import { pkce, tokenRequest, webUser } from '../../support/oauth-client.js';
import { rawExchange } from '../../support/raw-http.js';
import { sheetFile } from '../../support/spreadsheets.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { TcpRelay } from '../../support/tcp-relay.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

interface Answer {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: { $ref?: string } }>;
}
interface OperationObject {
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, Answer>;
}
interface Document {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Schema> };
}
interface Op {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  op: OperationObject;
  name: string;
}

const UPLOAD_CAP = 64 * 1024;
const KEYS_MAX = 20;
const MISSING_ID = '987654321';
const PUBLIC = new Set([`GET ${API}/health`, `GET ${API}/ready`]);
const URL_FILE_WRITES = new Set([`POST ${API}/cards/{id}/children`, `POST ${API}/cards/{id}/attributes`]);

const loadDocument = async (t: TestApp) => (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
const operationsOf = (doc: Document): Op[] =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method as Op['method'], path, op, name: `${method.toUpperCase()} ${path}` })),
  );
const lists = (o: Op, status: number) => String(status) in o.op.responses;
const reasons = (o: Op, status: number) => o.op.responses[String(status)]?.description ?? '';
const pathParams = (o: Op) => (o.op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
const hasBody = (o: Op) => o.op.requestBody !== undefined;
/** Short, so the 408 tests wait little; heads and bodies the tests send arrive at once. */
const BODY_TIMEOUT_MS = 2000;
const HEAD_TIMEOUT_MS = 2000;
const isUpload = (o: Op) => 'multipart/form-data' in (o.op.requestBody?.content ?? {});
/** The problem types a description names (`CARD.NOT_FOUND`, `FIELDS.INVALID_INPUT`), sorted, once each; not the examples after "or the module's own code". */
const codesIn = (description: string) => [...new Set([...description.matchAll(/\b([A-Z]+\.[A-Z_]+[A-Z])\b/g)].map((m) => m[1]))].sort();

/** The port the app listens on, loopback; it starts listening on the first call. */
async function listening(t: TestApp): Promise<number> {
  if (!t.app.getHttpServer().listening) await t.app.listen(0, '127.0.0.1');
  return (t.app.getHttpServer().address() as AddressInfo).port;
}

/** What an answer was, with where it came from, so a failing walk names the operation. */
function answered(o: Op, res: Response) {
  return { op: o.name, status: res.status, problem: /^application\/problem\+json/.test(res.headers['content-type'] ?? ''), type: res.body?.type };
}

/**
 * DESIGN.md §2's errors in the OpenAPI document: each operation lists the
 * error answers it really gives, as problem+json, and each listed answer is
 * what the operation answers when its cause is there.
 */
describe('the error answers of the OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;
  let ops: Op[];
  let owner: TestUser;
  let viewer: TestUser;
  const ids: Record<string, number> = {};

  /**
   * A path of the document with real ids, each segment's kind read from the segment before it; `missing` names a parameter
   * to point at nothing, by `nothing` when given (an id that is no id).
   */
  function urlFor(path: string, missing?: string, nothing?: string): string {
    const segments = path.split('/');
    return segments
      .map((segment, i) => {
        const param = /^\{(\w+)\}$/.exec(segment)?.[1];
        if (!param) return segment;
        if (param === missing) return nothing ?? (param === 'attr' ? 'no-such-field' : MISSING_ID);
        if (param === 'attr') return 'Notes';
        if (param === 'userId') return String(owner.id);
        return String(ids[segments[i - 1]]);
      })
      .join('/');
  }

  const idFor = (property: string): number | undefined =>
    ({ group_id: ids.groups, type_id: ids['group-types'], model_id: ids.models, parent_id: ids.cards, project_id: ids.projects, organization_id: ids.organizations })[property];

  /** A body the operation takes, so that what is checked is not hidden by a 400. */
  function validBody(o: Op): Record<string, unknown> | undefined {
    if (!hasBody(o)) return undefined;
    const content = o.op.requestBody!.content;
    const schema = (content['application/json'] ?? content['multipart/form-data']).schema;
    const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
    if (o.path.endsWith('/members')) return { user: `@${viewer.username}`, role: 'viewer' };
    return minimalBody(resolved, idFor);
  }

  const send = (o: Op, url: string, body?: object): Test => {
    const req = t.http[o.method](url);
    return body === undefined ? req : req.send(body);
  };

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        MAX_UPLOAD_BYTES: String(UPLOAD_CAP),
        API_KEYS_PER_USER_MAX: String(KEYS_MAX),
        // The cards are at depth 1 and 2: a third level is a conflict.
        MAX_CARD_DEPTH: '2',
        REQUEST_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
        REQUEST_HEADERS_TIMEOUT_MS: String(HEAD_TIMEOUT_MS),
      },
    });
    owner = await t.user();
    viewer = await t.user();
    const ws = workspaceClient(t);
    ids.organizations = await ws.team(owner);
    await ws.addMember(owner, ids.organizations, viewer, 'viewer');
    const project = await ws.project(owner, ids.organizations);
    ids.projects = project.id;
    const post = async (path: string, body: object) => (await t.http.post(`${API}${path}`).set(as(owner)).send(body).expect(201)).body;
    ids.cards = (await post(`/cards/${project.top_level_card_id}/children`, { title: 'card' })).id;
    ids.attributes = (await post(`/projects/${project.id}/attributes`, { name: 'Notes', type: 'text' })).id;
    ids.models = (await post(`/projects/${project.id}/models`, { name: 'Bug' })).id;
    ids['group-types'] = (await post(`/projects/${project.id}/group-types`, { name: 'Status', one_group_per_card: true })).id;
    ids.groups = (await post(`/cards/${project.top_level_card_id}/groups`, { type_id: ids['group-types'], title: 'Todo' })).id;
    ids['api-keys'] = (await post('/me/api-keys', { name: 'spare' })).id;
    await post(`/projects/${project.id}/attributes`, { name: 'Docs', type: 'files' });
    await t.http.post(`${API}/cards/${ids.cards}/attributes/Docs/append`).set(as(owner)).send({ value: { name: 'a.txt', data: 'a' } }).expect(200);
    ids.files = (await t.http.get(`${API}/cards/${ids.cards}`).set(as(owner)).expect(200)).body.attributes.Docs[0].id;
    doc = await loadDocument(t);
    ops = operationsOf(doc);
  });
  afterAll(() => t.close());

  it('lists every error answer as problem+json, by the rules each operation falls under', () => {
    expect(ops.length).toBeGreaterThan(60);
    const wrong: string[] = [];
    const expectThat = (o: Op, what: string, holds: boolean) => holds || wrong.push(`${o.name}: ${what}`);
    for (const o of ops) {
      for (const [status, answer] of Object.entries(o.op.responses).filter(([s]) => Number(s) >= 400)) {
        expectThat(o, `${status} is problem+json`, answer.content?.['application/problem+json']?.schema.$ref === '#/components/schemas/Problem');
      }
      const authenticated = !PUBLIC.has(o.name);
      expectThat(o, '401 iff authenticated', lists(o, 401) === authenticated);
      expectThat(o, '429 RATE.LIMITED iff authenticated', /RATE\.LIMITED/.test(reasons(o, 429)) === authenticated);
      if (authenticated) {
        expectThat(o, '401 says WWW-Authenticate', 'WWW-Authenticate' in (o.op.responses['401'].headers ?? {}));
        expectThat(o, '429 says Retry-After', 'Retry-After' in (o.op.responses['429'].headers ?? {}));
        expectThat(o, '503 for the database, with Retry-After', /SERVICE\.UNAVAILABLE/.test(reasons(o, 503)) && 'Retry-After' in (o.op.responses['503'].headers ?? {}));
      }
      // A body is read before routing whatever the operation (a read takes its parameters from one):
      // every operation refuses one that is malformed, too large, too slow or of a type not read.
      expectThat(o, '400 for a malformed body', lists(o, 400));
      expectThat(o, '413 for a body over 1 MiB', /INPUT\.TOO_LARGE: a JSON or form body over 1048576 bytes/.test(reasons(o, 413)));
      expectThat(o, '415 for a body of a type not read, with Accept', /media type the API does not read/.test(reasons(o, 415)) && 'Accept' in (o.op.responses['415'].headers ?? {}));
      // A head too slow is refused by the HTTP server before routing, whatever the operation; a body too slow too.
      expectThat(o, '408 for a slow head', /^(- )?HTTP\.408: the request's head .*REQUEST_HEADERS_TIMEOUT_MS/m.test(reasons(o, 408)));
      expectThat(o, '408 for a slow body', /REQUEST_BODY_TIMEOUT_MS/.test(reasons(o, 408)));
      // Refused by the HTTP server's parser before routing, whatever the operation.
      expectThat(o, '431 for headers over 16 KiB', /^HTTP\.431: .*16 KiB/.test(reasons(o, 431)));
      expectThat(o, '417 for an Expect other than 100-continue', /^HTTP\.417: .*100-continue/.test(reasons(o, 417)));
      expectThat(o, '404 iff an id in the path', lists(o, 404) === pathParams(o).length > 0);
      expectThat(o, 'cross-site 403 iff a write', /AUTH\.CROSS_SITE_WRITE/.test(reasons(o, 403)) === (authenticated && o.method !== 'get'));
      // Bodies (uploads, JSON, forms, sent to any operation), and file URLs, hold memory
      // (hardening/upload-memory, fields/file-url-memory, the body memory test below answer it); said once.
      const holdsUploads = isUpload(o) || URL_FILE_WRITES.has(o.name);
      expectThat(o, '503 SERVICE.BUSY for memory', /UPLOAD_MEMORY_MAX_BYTES/.test(reasons(o, 503)));
      expectThat(o, 'the memory 503 said once', (reasons(o, 503).match(/UPLOAD_MEMORY_MAX_BYTES/g) ?? []).length <= 1);
      // A write's unit of work that still meets other writes after all its attempts (unit-of-work.int-spec answers it).
      expectThat(o, '503 SERVICE.BUSY for contention iff a write', /SERVICE\.BUSY: other changes of the same rows/.test(reasons(o, 503)) === (o.method !== 'get'));
      // A statement past DATABASE_STATEMENT_TIMEOUT_MS (hardening/statement-timeout answers it).
      expectThat(o, '503 SERVICE.BUSY for the statement timeout iff authenticated', /DATABASE_STATEMENT_TIMEOUT_MS/.test(reasons(o, 503)) === authenticated);
      // One user's share of that memory (hardening/upload-memory, fields/file-url-share answer it).
      expectThat(o, '429 RATE.CONCURRENT_UPLOADS iff it takes uploads or file URLs', /RATE\.CONCURRENT_UPLOADS/.test(reasons(o, 429)) === holdsUploads);
      // One client address's bodies read before authentication (hardening/upload-memory, the body memory test below answer it).
      expectThat(o, '429 RATE.CONCURRENT_BODIES', /RATE\.CONCURRENT_BODIES/.test(reasons(o, 429)));
    }
    expect(wrong).toEqual([]);
    // Public, and still refusing bodies as every operation does.
    expect(Object.keys(doc.paths[`${API}/health`].get.responses)).toEqual(['200', '400', '408', '413', '415', '417', '429', '431', '503']);
    expect(Object.keys(doc.paths[`${API}/ready`].get.responses)).toEqual(['200', '400', '408', '413', '415', '417', '429', '431', '503']);
    // The operations the audit named, which take no body.
    for (const name of [`GET ${API}/cards/{id}`, `DELETE ${API}/cards/{id}`, `POST ${API}/cards/{id}/archive`, `DELETE ${API}/groups/{id}`]) {
      expect({ name, statuses: Object.keys(ops.find((o) => o.name === name)!.op.responses) }).toEqual({ name, statuses: expect.arrayContaining(['408', '413', '415', '429', '503']) });
    }
    // the operations that name no parameter still refuse any: 400
    expect(lists(ops.find((o) => o.name === `GET ${API}/projects/{id}/attributes`)!, 400)).toBe(true);
    expect(lists(ops.find((o) => o.name === `GET ${API}/cards/{id}`)!, 400)).toBe(true);
  });

  it('401: an operation lists it exactly when it answers it without credentials, with WWW-Authenticate', async () => {
    for (const o of ops) {
      const res = await send(o, urlFor(o.path), validBody(o));
      expect({ op: o.name, listed: lists(o, 401), status: res.status }).toEqual({ op: o.name, listed: res.status === 401, status: expect.any(Number) });
      if (res.status !== 401) continue;
      expect(answered(o, res)).toEqual({ op: o.name, status: 401, problem: true, type: 'AUTH.UNAUTHORIZED' });
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="cardwork"/);
    }
  });

  it('404: an operation lists it exactly when it names ids in its path, and answers it when any of them names nothing, with the codes it lists and only those', async () => {
    for (const o of ops) {
      expect({ op: o.name, listed: lists(o, 404) }).toEqual({ op: o.name, listed: pathParams(o).length > 0 });
      const answeredCodes = new Set<string>();
      for (const param of pathParams(o)) {
        const res = await send(o, urlFor(o.path, param), validBody(o)).set(as(owner));
        expect({ ...answered(o, res), param }).toEqual({ op: o.name, param, status: 404, problem: true, type: expect.stringMatching(/NOT_FOUND$/) });
        answeredCodes.add(res.body.type);
        if (param === 'attr') continue;
        // An id ParseIdPipe cannot read names nothing.
        const unread = await send(o, urlFor(o.path, param, '0'), validBody(o)).set(as(owner));
        expect({ ...answered(o, unread), param }).toEqual({ op: o.name, param, status: 404, problem: true, type: 'RESOURCE.NOT_FOUND' });
        answeredCodes.add(unread.body.type);
      }
      expect({ op: o.name, codes: codesIn(reasons(o, 404)) }).toEqual({ op: o.name, codes: [...answeredCodes].sort() });
    }
  });

  it('400: every operation lists it and refuses a property or query parameter it does not take, naming it', async () => {
    // A write without a body reads the query string as its body: refused there, it does nothing.
    for (const o of ops) {
      const res = hasBody(o)
        ? await send(o, urlFor(o.path), { ...validBody(o), not_a_parameter: 1 }).set(as(owner))
        : await send(o, `${urlFor(o.path)}?not_a_parameter=1`, undefined).set(as(owner));
      expect({ op: o.name, listed: lists(o, 400), status: res.status }).toEqual({ op: o.name, listed: true, status: 400 });
      expect(answered(o, res)).toEqual({ op: o.name, status: 400, problem: true, type: expect.any(String) });
      expect({ op: o.name, errors: res.body.errors }).toEqual({ op: o.name, errors: expect.arrayContaining([expect.objectContaining({ message: expect.any(String) })]) });
    }
  });

  it('413: every operation lists it and refuses a JSON body over 1 MiB at once, and an upload operation a file over MAX_UPLOAD_BYTES', async () => {
    // Raw: the head alone, declaring the length, is answered before any of the body is sent.
    const port = await listening(t);
    expect(ops.filter((o) => !lists(o, 413)).map((o) => o.name)).toEqual([]);
    for (const o of ops) {
      const head = `${o.method.toUpperCase()} ${urlFor(o.path)} HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${owner.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024 + 1}\r\n\r\n`;
      const { response } = await rawExchange(port, head);
      expect({ op: o.name, status: response?.status, type: response && JSON.parse(response.body).type }).toEqual({ op: o.name, status: 413, type: 'INPUT.TOO_LARGE' });
    }
    const uploads = ops.filter(isUpload);
    expect(uploads.map((o) => o.name).sort()).toEqual(
      [`POST ${API}/cards/{id}/attributes/{attr}`, `POST ${API}/cards/{id}/attributes/{attr}/append`, `POST ${API}/importers/spreadsheet/discover`].sort(),
    );
    for (const o of uploads) {
      expect({ op: o.name, reasons: reasons(o, 413) }).toEqual({ op: o.name, reasons: expect.stringContaining(`${UPLOAD_CAP} bytes (MAX_UPLOAD_BYTES)`) });
      const part = o.path.endsWith('discover') ? 'file' : 'value';
      const res = await t.http.post(urlFor(o.path).replace('/Notes', '/Docs')).set(as(owner)).attach(part, Buffer.alloc(UPLOAD_CAP + 1, 'a'), 'big.csv');
      expect(answered(o, res)).toEqual({ op: o.name, status: 413, problem: true, type: 'INPUT.TOO_LARGE' });
    }
  });

  it('408: every operation lists it and answers it to a head that stops arriving, as problem+json, before any route runs', async () => {
    // Raw: a request line and one header, then nothing. All at once: each waits out the timeout.
    const port = await listening(t);
    const answers = await Promise.all(
      ops.map(async (o) => {
        const { response } = await rawExchange(port, `${o.method.toUpperCase()} ${urlFor(o.path)} HTTP/1.1\r\nHost: localhost\r\n`);
        return { op: o.name, status: response?.status, type: response?.headers['content-type'], problem: response && JSON.parse(response.body).type };
      }),
    );
    expect(answers).toEqual(ops.map((o) => ({ op: o.name, status: 408, type: 'application/problem+json', problem: 'HTTP.408' })));
  });

  it('408: every operation answers a body that stops arriving once its time is used, before any route runs', async () => {
    // Raw: the head declares a body of which nothing comes. All at once: each waits out the timeout.
    const port = await listening(t);
    const answers = await Promise.all(
      ops.map(async (o) => {
        const head = `${o.method.toUpperCase()} ${urlFor(o.path)} HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${owner.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
        const { response } = await rawExchange(port, head);
        return { op: o.name, status: response?.status, type: response?.headers['content-type'], problem: response && JSON.parse(response.body).type };
      }),
    );
    expect(answers.length).toBe(ops.length);
    expect(answers).toEqual(answers.map(({ op }) => ({ op, status: 408, type: expect.stringMatching(/^application\/problem\+json/), problem: 'HTTP.408' })));
  });

  it('415: every operation lists it and refuses a body of a type the API does not read, naming the types it reads, before any route runs', async () => {
    // Raw: the head alone, declaring a text/plain body, is answered before any of it is sent; no credential needed.
    const port = await listening(t);
    for (const o of ops) {
      expect({ op: o.name, listed: lists(o, 415) }).toEqual({ op: o.name, listed: true });
      const head = `${o.method.toUpperCase()} ${urlFor(o.path)} HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n`;
      const { response } = await rawExchange(port, head);
      const answer = { op: o.name, status: response?.status, type: response && JSON.parse(response.body).type, accept: response?.headers.accept };
      expect(answer).toEqual({ op: o.name, status: 415, type: 'INPUT.UNSUPPORTED_MEDIA', accept: expect.stringContaining('application/json') });
    }
  });

  it('405: every path answers a method it does not take with HTTP.405 and Allow, as the document describes once for all', async () => {
    const full = doc as Document & { info: { description: string }; components: { responses: Record<string, Answer> } };
    const described = full.components.responses.MethodNotAllowed;
    expect(described.content?.['application/problem+json']?.schema.$ref).toBe('#/components/schemas/Problem');
    expect(Object.keys(described.headers ?? {})).toEqual(['Allow']);
    expect(full.info.description).toMatch(/405 \(`#\/components\/responses\/MethodNotAllowed`\)/);
    // The methods of the paths of the document the URL matches, a literal segment winning over
    // a parameter in its place (`/projects/all` is not `/projects/{id}`: an id is a number).
    const allowFor = (url: string) => {
      const matched = Object.entries(doc.paths).filter(([path]) => new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`).test(url));
      const isParam = (path: string, i: number) => /^\{\w+\}$/.test(path.split('/')[i] ?? '');
      const serving = matched.filter(([path]) => !matched.some(([other]) => path.split('/').some((_, i) => isParam(path, i) && !isParam(other, i))));
      const taken = new Set(serving.flatMap(([, methods]) => Object.keys(methods).map((m) => m.toUpperCase())));
      return [...taken, ...(taken.has('GET') ? ['HEAD'] : []), 'OPTIONS'].sort().join(', ');
    };
    let refused = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      const allow = allowFor(urlFor(path));
      for (const method of ['get', 'post', 'put', 'delete', 'patch'] as const) {
        if (allow.includes(method.toUpperCase())) continue;
        const res = await t.http[method](urlFor(path)).set(as(owner));
        expect({ path, method, ...answered({ name: `${method} ${path}` } as Op, res), allow: res.headers.allow }).toEqual({
          path,
          method,
          op: `${method} ${path}`,
          status: 405,
          problem: true,
          type: 'HTTP.405',
          allow,
        });
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(60);
  });

  /**
   * Sends every operation, raw (a client library may refuse to send such a
   * head), with the owner's key and `extraHeaders`, and expects each to list
   * `status` and answer it as problem+json `HTTP.<status>`.
   */
  async function expectEveryOperationRefusedRaw(port: number, status: number, extraHeaders: string): Promise<void> {
    for (const o of ops) {
      expect({ op: o.name, listed: lists(o, status) }).toEqual({ op: o.name, listed: true });
      const head = `${o.method.toUpperCase()} ${urlFor(o.path)} HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${owner.apiKey}\r\n${extraHeaders}\r\n\r\n`;
      const { response } = await rawExchange(port, head);
      const answer = { op: o.name, status: response?.status, type: response?.headers['content-type'], problem: response && JSON.parse(response.body).type };
      expect(answer).toEqual({ op: o.name, status, type: 'application/problem+json', problem: `HTTP.${status}` });
    }
  }

  it('431: every operation lists it and answers it to headers over 16 KiB, as problem+json, before any route runs', async () => {
    // Raw: a client library may refuse to send such headers.
    const port = await listening(t);
    await expectEveryOperationRefusedRaw(port, 431, `Cookie: big=${'a'.repeat(17 * 1024)}`);
    // A URL counts toward the limit, and the answer says so.
    const { response } = await rawExchange(port, `GET ${API}/organizations?q=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect([response?.status, response && JSON.parse(response.body).detail]).toEqual([431, 'The request line and headers are larger than 16 KiB in all (a URL counts, as cookies do)']);
  });

  it('417: every operation lists it and answers an Expect other than 100-continue as problem+json, before any route runs', async () => {
    const port = await listening(t);
    await expectEveryOperationRefusedRaw(port, 417, 'Expect: 200-ok\r\nContent-Length: 0');
    // The detail quotes at most 100 characters of what was asked.
    const { response } = await rawExchange(port, `GET ${API}/health HTTP/1.1\r\nHost: localhost\r\nExpect: ${'x'.repeat(150)}\r\n\r\n`);
    expect([response?.status, response && JSON.parse(response.body).detail]).toEqual([417, `The Expect header asks for "${'x'.repeat(100)}"; this server meets only 100-continue`]);
  });

  it('403: every write that lists the cross-site refusal answers it to a cross-site browser request; reads answer', async () => {
    for (const o of ops.filter((x) => !PUBLIC.has(x.name))) {
      const res = await send(o, urlFor(o.path), validBody(o)).set(as(owner)).set('Sec-Fetch-Site', 'cross-site');
      if (/AUTH\.CROSS_SITE_WRITE/.test(reasons(o, 403))) expect(answered(o, res)).toEqual({ op: o.name, status: 403, problem: true, type: 'AUTH.CROSS_SITE_WRITE' });
      else expect({ op: o.name, status: res.status }).toEqual({ op: o.name, status: 200 });
    }
  });

  it('403: an operation lists the role refusal exactly when it refuses a viewer of the team', async () => {
    const upload = await t.http.post(`${API}/importers/spreadsheet/discover`).set(as(viewer)).attach('file', sheetFile([['Title'], ['a']], 'csv'), 'a.csv').expect(201);
    const bodies: Record<string, object> = {
      [`POST ${API}/importers/spreadsheet/import`]: { discover_file_id: upload.body.file_id, project_id: ids.projects, mapping: { 0: { type: 'title' } } },
    };
    expect(ops.filter((o) => /role/.test(reasons(o, 403))).length).toBeGreaterThan(30);
    for (const o of ops) {
      const res = await send(o, urlFor(o.path), bodies[o.name] ?? validBody(o)).set(as(viewer));
      expect({ op: o.name, listed: /role/.test(reasons(o, 403)), status: res.status }).toEqual({ op: o.name, listed: res.status === 403, status: expect.any(Number) });
      if (res.status === 403) expect(answered(o, res)).toEqual({ op: o.name, status: 403, problem: true, type: 'ACCESS.FORBIDDEN' });
    }
  });

  it('403: every operation that lists a scope refusal answers it to a read_user access token, which GET /me takes', async () => {
    const callback = 'http://127.0.0.1:8765/callback';
    const ann = webUser(t);
    await ann.signUp('scoped_ann');
    const client = await ann.registerApp([callback], 'public');
    const { verifier, challenge } = pkce();
    const code = await ann.code({ response_type: 'code', client_id: client.clientId, redirect_uri: callback, scope: 'read_user', code_challenge: challenge, code_challenge_method: 'S256' });
    const token = (await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: callback, client_id: client.clientId, code_verifier: verifier }).expect(200)).body.access_token;
    for (const o of ops.filter((x) => !PUBLIC.has(x.name))) {
      const res = await send(o, urlFor(o.path), validBody(o)).set('Authorization', `Bearer ${token}`);
      const scoped = /required_scope/.test(reasons(o, 403));
      expect({ op: o.name, scoped, status: res.status, required: res.body.required_scope }).toEqual(
        scoped
          ? { op: o.name, scoped, status: 403, required: expect.any(String) }
          : { op: o.name, scoped, status: 200, required: undefined },
      );
    }
  });

  describe('409', () => {
    /** Each declared conflict, provoked; what only a race can give is not. */
    const RACES_ONLY = new Set(['CARD.TREE_BUSY', 'IMPORT.FIELD_DELETED']);
    const conflicts = (): Array<{ name: string; url: string; body?: object; code: string }> => [
      { name: `POST ${API}/cards/{id}/relocate`, url: `/cards/${ids.top}/relocate`, body: { parent_id: ids.cards }, code: 'CARD.TOP_LEVEL' },
      { name: `POST ${API}/cards/{id}/relocate`, url: `/cards/${ids.cards}/relocate`, body: { parent_id: ids.child }, code: 'CARD.CYCLE_DETECTED' },
      { name: `POST ${API}/cards/{id}/relocate`, url: `/cards/${ids.cards}/relocate`, body: { parent_id: ids.other }, code: 'CARD.TOO_DEEP' },
      { name: `POST ${API}/cards/{id}/children`, url: `/cards/${ids.child}/children`, body: { title: 'third level' }, code: 'CARD.TOO_DEEP' },
      // The row matches `child` (depth 2) by title; its Children cell would add a card below it.
      {
        name: `POST ${API}/importers/spreadsheet/import`,
        url: '/importers/spreadsheet/import',
        body: { discover_file_id: ids.deepSheet, project_id: ids.projects, options: { ignore_header: true }, mapping: { '0': { type: 'title' }, '1': { type: 'children' } }, update_field: 'title' },
        code: 'CARD.TOO_DEEP',
      },
      { name: `POST ${API}/cards/{id}/archive`, url: `/cards/${ids.top}/archive`, code: 'CARD.TOP_LEVEL' },
      { name: `DELETE ${API}/cards/{id}/archive`, url: `/cards/${ids.top}/archive`, code: 'CARD.TOP_LEVEL' },
      { name: `DELETE ${API}/cards/{id}`, url: `/cards/${ids.top}`, code: 'CARD.TOP_LEVEL' },
      { name: `POST ${API}/cards/{id}/add-to-group`, url: `/cards/${ids.child}/add-to-group`, body: { group_id: ids.done }, code: 'GROUPING.ONE_GROUP_PER_CARD' },
      { name: `POST ${API}/projects/{id}/attributes`, url: `/projects/${ids.projects}/attributes`, body: { name: 'notes', type: 'text' }, code: 'FIELDS.NAME_TAKEN' },
      { name: `PUT ${API}/attributes/{id}`, url: `/attributes/${ids.attributes}`, body: { name: 'DOCS' }, code: 'FIELDS.NAME_TAKEN' },
      { name: `PUT ${API}/attributes/{id}`, url: `/attributes/${ids.due}`, body: { options: { period: true } }, code: 'FIELDS.FIELD_HAS_VALUES' },
      { name: `POST ${API}/models/{id}/attributes`, url: `/models/${ids.models}/attributes`, body: { name: 'Notes', type: 'text' }, code: 'FIELDS.NAME_TAKEN' },
      { name: `POST ${API}/projects/{id}/models`, url: `/projects/${ids.projects}/models`, body: { name: 'bug' }, code: 'FIELDS.MODEL_NAME_TAKEN' },
      { name: `POST ${API}/projects/{id}/group-types`, url: `/projects/${ids.projects}/group-types`, body: { name: 'status' }, code: 'GROUPING.DUPLICATE_GROUP_TYPE_NAME' },
      { name: `POST ${API}/projects/{id}/group-types`, url: `/projects/${ids.projects}/group-types`, body: { name: 'Notes' }, code: 'FIELDS.NAME_TAKEN' },
      { name: `PUT ${API}/group-types/{id}`, url: `/group-types/${ids['group-types']}`, body: { name: 'Labels' }, code: 'GROUPING.DUPLICATE_GROUP_TYPE_NAME' },
      { name: `PUT ${API}/group-types/{id}`, url: `/group-types/${ids['group-types']}`, body: { name: 'Docs' }, code: 'FIELDS.NAME_TAKEN' },
      { name: `PUT ${API}/group-types/{id}`, url: `/group-types/${ids.labels}`, body: { one_group_per_card: true }, code: 'GROUPING.SEVERAL_GROUPS_PER_CARD' },
      { name: `POST ${API}/cards/{id}/groups`, url: `/cards/${ids.top}/groups`, body: { type_id: ids['group-types'], title: 'todo' }, code: 'GROUPING.DUPLICATE_GROUP_TITLE' },
      { name: `PUT ${API}/groups/{id}`, url: `/groups/${ids.done}`, body: { title: 'TODO' }, code: 'GROUPING.DUPLICATE_GROUP_TITLE' },
      { name: `POST ${API}/organizations/{id}/members`, url: `/organizations/${ids.organizations}/members`, body: { user: `@${viewer.username}` }, code: 'WORKSPACE.ALREADY_MEMBER' },
      { name: `PUT ${API}/organizations/{id}/members/{userId}`, url: `/organizations/${ids.organizations}/members/${owner.id}`, body: { role: 'member' }, code: 'WORKSPACE.LAST_ADMIN' },
      { name: `DELETE ${API}/organizations/{id}/members/{userId}`, url: `/organizations/${ids.organizations}/members/${owner.id}`, code: 'WORKSPACE.LAST_ADMIN' },
      { name: `POST ${API}/me/api-keys`, url: '/me/api-keys', body: { name: 'one too many' }, code: 'IDENTITY.API_KEY_LIMIT' },
    ];

    beforeAll(async () => {
      const post = async (path: string, body: object) => (await t.http.post(`${API}${path}`).set(as(owner)).send(body).expect(201)).body;
      ids.top = (await t.http.get(`${API}/projects/${ids.projects}`).set(as(owner)).expect(200)).body.top_level_card_id;
      ids.child = (await post(`/cards/${ids.cards}/children`, { title: 'child', group_id: ids.groups })).id;
      ids.other = (await post(`/cards/${ids.top}/children`, { title: 'other' })).id;
      const deepSheet = Buffer.from('Title,Children\nchild,too deep\n');
      ids.deepSheet = (await t.http.post(`${API}/importers/spreadsheet/discover`).set(as(owner)).attach('file', deepSheet, 'deep.csv').expect(201)).body.file_id;
      ids.done = (await post(`/cards/${ids.top}/groups`, { type_id: ids['group-types'], title: 'Done' })).id;
      ids.labels = (await post(`/projects/${ids.projects}/group-types`, { name: 'Labels', one_group_per_card: false })).id;
      const red = (await post(`/cards/${ids.top}/groups`, { type_id: ids.labels, title: 'Red' })).id;
      const blue = (await post(`/cards/${ids.top}/groups`, { type_id: ids.labels, title: 'Blue' })).id;
      for (const group of [red, blue]) await t.http.post(`${API}/cards/${ids.cards}/add-to-group`).set(as(owner)).send({ group_id: group }).expect(200);
      ids.due = (await post(`/projects/${ids.projects}/attributes`, { name: 'Due', type: 'date' })).id;
      await t.http.post(`${API}/cards/${ids.cards}/attributes/Due`).set(as(owner)).send({ value: '2026-01-01' }).expect(200);
      // the owner's keys up to API_KEYS_PER_USER_MAX
      for (let i = 0; i < KEYS_MAX; i++) if ((await t.http.post(`${API}/me/api-keys`).set(as(owner)).send({})).status !== 201) break;
    });

    it('each declared conflict happens, and is declared where it happens', async () => {
      for (const c of conflicts()) {
        const o = ops.find((x) => x.name === c.name)!;
        const res = await send(o, `${API}${c.url}`, c.body).set(as(owner));
        expect({ ...answered(o, res), code: c.code }).toEqual({ op: c.name, code: c.code, status: 409, problem: true, type: c.code });
        expect({ op: c.name, reasons: reasons(o, 409) }).toEqual({ op: c.name, reasons: expect.stringContaining(`${c.code}:`) });
      }
    });

    /** The POSTs that take an Idempotency-Key, and so list the conflicts it can cause (IdempotencyKeyGuard). */
    const keyedPosts = () => ops.filter((o) => o.method === 'post' && (o.op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key') && /REQUEST\.IN_PROGRESS/.test(reasons(o, 409)));
    const KEY_CONFLICTS = ['REQUEST.IN_PROGRESS', 'REQUEST.ANSWER_NOT_KEPT'];

    it("each Idempotency-Key answer happens on every POST that lists it, from the key's row a first request left", async () => {
      const db = t.app.get(DataSource);
      // Every POST documents the header (an upload's says it is refused, a 400), no other method does; its 400 says why it is refused.
      const takesKey = (o: Op) => (o.op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(ops.filter((o) => takesKey(o) !== (o.method === 'post')).map((o) => o.name)).toEqual([]);
      expect(ops.filter((o) => o.method === 'post' && !/INPUT\.INVALID: the `Idempotency-Key` header/m.test(reasons(o, 400))).map((o) => o.name)).toEqual([]);
      const posts = keyedPosts();
      const onlyMultipart = (o: Op) => hasBody(o) && Object.keys(o.op.requestBody!.content).every((type) => type === 'multipart/form-data');
      expect(posts.map((o) => o.name)).toEqual(ops.filter((o) => o.method === 'post' && !onlyMultipart(o)).map((o) => o.name));
      expect(posts.length).toBeGreaterThan(15);
      let n = 0;
      for (const o of posts) {
        const url = urlFor(o.path);
        const body = validBody(o);
        const key = `listed-${++n}`;
        const again = () => send(o, url, body).set(as(owner)).set('Idempotency-Key', key);
        // The first request with the key still running, then done without its answer kept, then a key used for another request.
        await db.query(`INSERT INTO identity.idempotency_keys (user_id, key, fingerprint, claim, created_at) VALUES ($1, $2, $3, $4, clock_timestamp())`, [owner.id, key, requestFingerprint('POST', url, body), randomUUID()]);
        const running = await again();
        expect({ ...answered(o, running), retryAfter: running.headers['retry-after'] }).toEqual({ op: o.name, status: 409, problem: true, type: 'REQUEST.IN_PROGRESS', retryAfter: '1' });
        await db.query(`UPDATE identity.idempotency_keys SET status = 201 WHERE user_id = $1 AND key = $2`, [owner.id, key]);
        expect(answered(o, await again())).toEqual({ op: o.name, status: 409, problem: true, type: 'REQUEST.ANSWER_NOT_KEPT' });
        await db.query(`UPDATE identity.idempotency_keys SET fingerprint = 'another request' WHERE user_id = $1 AND key = $2`, [owner.id, key]);
        expect(answered(o, await again())).toEqual({ op: o.name, status: 422, problem: true, type: 'INPUT.IDEMPOTENCY_KEY_REUSED' });
        expect({ op: o.name, conflicts: codesIn(reasons(o, 409)).filter((code) => code.startsWith('REQUEST.')), reused: codesIn(reasons(o, 422)) }).toEqual({
          op: o.name,
          conflicts: [...KEY_CONFLICTS].sort(),
          reused: ['INPUT.IDEMPOTENCY_KEY_REUSED'],
        });
        expect({ op: o.name, retryAfter: 'Retry-After' in (o.op.responses['409'].headers ?? {}) }).toEqual({ op: o.name, retryAfter: true });
      }
      // Only those list them; a 422 nothing else answers.
      const keyed = new Set(posts.map((o) => o.name));
      expect(ops.filter((o) => !keyed.has(o.name) && (lists(o, 422) || /REQUEST\./.test(reasons(o, 409)))).map((o) => o.name)).toEqual([]);
    });

    it('names no code that cannot happen', () => {
      const provoked = new Set(conflicts().map((c) => `${c.name} ${c.code}`));
      for (const o of keyedPosts()) for (const code of KEY_CONFLICTS) provoked.add(`${o.name} ${code}`);
      const declared = ops.flatMap((o) => [...reasons(o, 409).matchAll(/([A-Z]+\.[A-Z_]+):/g)].map((m) => ({ o, code: m[1] })));
      expect(declared.length).toBeGreaterThan(20);
      expect(declared.filter(({ o, code }) => !provoked.has(`${o.name} ${code}`) && !RACES_ONLY.has(code)).map(({ o, code }) => `${o.name} ${code}`)).toEqual([]);
    });
  });

  describe('400 of the value writes', () => {
    /** What only a race gives: the field deleted between the value's read and its write. */
    const RACES_ONLY: Record<string, string[]> = { [`POST ${API}/cards/{id}/attributes/{attr}`]: ['FIELDS.UNKNOWN_ATTRIBUTE'] };
    /**
     * Each code the 400 of these operations lists, provoked; they answer codes of several
     * modules (the card's, its values', its group's), which error-responses.ts lists by operationId.
     */
    const refusals = (): Array<{ name: string; url: string; body: object; code: string }> => {
      const one = `POST ${API}/cards/{id}/attributes/{attr}`;
      const many = `POST ${API}/cards/{id}/attributes`;
      const create = `POST ${API}/cards/{id}/children`;
      const card = ids.cards;
      return [
        { name: one, url: `/cards/${card}/attributes/When`, body: { value: 'not a date' }, code: 'INPUT.INVALID' },
        { name: one, url: `/cards/${card}/attributes/Notes`, body: { value: 'x', other: 1 }, code: 'FIELDS.INVALID_INPUT' },
        { name: one, url: `/cards/${card}/attributes/Status`, body: { value: 'x' }, code: 'FIELDS.GROUP_TYPE_FIELD' },
        { name: one, url: `/cards/${card}/attributes/Severity`, body: { value: 'x' }, code: 'FIELDS.ATTRIBUTE_NOT_AVAILABLE' },
        { name: many, url: `/cards/${card}/attributes`, body: { attributes: { When: 'not a date' } }, code: 'INPUT.INVALID' },
        { name: many, url: `/cards/${card}/attributes`, body: { attributes: {} }, code: 'FIELDS.INVALID_INPUT' },
        { name: many, url: `/cards/${card}/attributes`, body: { attributes: { 'No such field': 1 } }, code: 'FIELDS.UNKNOWN_ATTRIBUTE' },
        { name: many, url: `/cards/${card}/attributes`, body: { attributes: { Status: 'x' } }, code: 'FIELDS.GROUP_TYPE_FIELD' },
        { name: many, url: `/cards/${card}/attributes`, body: { attributes: { Severity: 'x' } }, code: 'FIELDS.ATTRIBUTE_NOT_AVAILABLE' },
        { name: create, url: `/cards/${card}/children`, body: { title: 1 }, code: 'INPUT.INVALID' },
        { name: create, url: `/cards/${card}/children`, body: { title: ' ' }, code: 'CARD.INVALID_INPUT' },
        { name: create, url: `/cards/${card}/children`, body: { title: 'x', attributes: { Notes: 'a', [ids.attributes]: 'b' } }, code: 'FIELDS.INVALID_INPUT' },
        { name: create, url: `/cards/${card}/children`, body: { title: 'x', attributes: { 'No such field': 1 } }, code: 'FIELDS.UNKNOWN_ATTRIBUTE' },
        { name: create, url: `/cards/${card}/children`, body: { title: 'x', attributes: { Status: 'x' } }, code: 'FIELDS.GROUP_TYPE_FIELD' },
        { name: create, url: `/cards/${card}/children`, body: { title: 'x', attributes: { Severity: 'x' } }, code: 'FIELDS.ATTRIBUTE_NOT_AVAILABLE' },
        { name: create, url: `/cards/${card}/children`, body: { title: 'x', group_id: Number(MISSING_ID) }, code: 'GROUPING.INVALID_INPUT' },
      ];
    };

    beforeAll(async () => {
      const post = async (path: string, body: object) => (await t.http.post(`${API}${path}`).set(as(owner)).send(body).expect(201)).body;
      await post(`/projects/${ids.projects}/attributes`, { name: 'When', type: 'date' });
      await post(`/models/${ids.models}/attributes`, { name: 'Severity', type: 'text' });
    });

    it('each listed code is answered where it is listed, and each answered code is listed', async () => {
      for (const r of refusals()) {
        const o = ops.find((x) => x.name === r.name)!;
        const res = await send(o, `${API}${r.url}`, r.body).set(as(owner));
        expect({ ...answered(o, res), code: r.code }).toEqual({ op: r.name, code: r.code, status: 400, problem: true, type: r.code });
      }
      for (const name of new Set(refusals().map((r) => r.name))) {
        const provoked = [...refusals().filter((r) => r.name === name).map((r) => r.code), ...(RACES_ONLY[name] ?? [])];
        expect({ name, listed: codesIn(reasons(ops.find((o) => o.name === name)!, 400)) }).toEqual({ name, listed: [...new Set(provoked)].sort() });
      }
    });
  });

  it('503: GET /ready lists it and answers it while the server drains', async () => {
    const ready = ops.find((o) => o.name === `GET ${API}/ready`)!;
    expect(reasons(ready, 503)).toMatch(/SERVICE\.NOT_READY/);
    t.app.get(DrainState).start();
    const res = await t.http.get(`${API}/ready`);
    expect(answered(ready, res)).toEqual({ op: ready.name, status: 503, problem: true, type: 'SERVICE.NOT_READY' });
  });
});

/** A window of RATE_LIMIT_PER_MINUTE requests per credential, used up before each call. */
describe('the 429 of the OpenAPI document', () => {
  let t: TestApp;
  let u: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    u = await t.user();
  });
  afterAll(() => t.close());

  /** The call's answer once the key's window is used up; again if the window turned in between. */
  async function overTheLimit(call: () => Test): Promise<Response> {
    let res: Response | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      while ((await t.http.get(`${API}/me`).set(as(u))).status !== 429);
      res = await call();
      if (res.status === 429) return res;
    }
    return res!;
  }

  it('every operation that lists it answers it once the credential used its window, with Retry-After; health and readiness are not limited', async () => {
    for (const o of operationsOf(await loadDocument(t))) {
      const url = o.path.replace(/\{\w+\}/g, MISSING_ID);
      const res = await overTheLimit(() => t.http[o.method](url).set(as(u)));
      if (!/RATE\.LIMITED/.test(reasons(o, 429))) {
        expect({ op: o.name, status: res.status }).toEqual({ op: o.name, status: 200 });
        continue;
      }
      expect(answered(o, res)).toEqual({ op: o.name, status: 429, problem: true, type: 'RATE.LIMITED' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});

/**
 * What the bodies being read may hold in memory, small: a body declaring more
 * than a client address's share is a 429, more than the whole budget a 503,
 * both before any of it is read or any route runs.
 */
describe('the body memory answers of the OpenAPI document', () => {
  const BUDGET = 400_000;
  let t: TestApp;

  beforeAll(async () => {
    // The share: a quarter of the budget, but at least one upload (64 KiB) and its envelope.
    t = await createTestApp({ env: { MAX_UPLOAD_BYTES: String(UPLOAD_CAP), UPLOAD_MEMORY_MAX_BYTES: String(BUDGET) } });
  });
  afterAll(() => t.close());

  it('every operation lists them and answers them, signed in or not', async () => {
    const port = await listening(t);
    for (const o of operationsOf(await loadDocument(t))) {
      const url = o.path.replace(/\{\w+\}/g, MISSING_ID);
      for (const [bytes, status, type, why] of [
        [300_000, 429, 'RATE.CONCURRENT_BODIES', /RATE\.CONCURRENT_BODIES/],
        [BUDGET + 1, 503, 'SERVICE.BUSY', /UPLOAD_MEMORY_MAX_BYTES/],
      ] as const) {
        expect({ op: o.name, status, listed: why.test(reasons(o, status)) }).toEqual({ op: o.name, status, listed: true });
        const head = `${o.method.toUpperCase()} ${url} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n`;
        const { response } = await rawExchange(port, head);
        expect({ op: o.name, status: response?.status, type: response && JSON.parse(response.body).type }).toEqual({ op: o.name, status, type });
      }
    }
  });
});

const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;

/** The database cut off by a TCP relay between the server and PostgreSQL (as database-outage.e2e-spec.ts does). */
describeWithServer('the 503 of the OpenAPI document', () => {
  let relay: TcpRelay;
  let t: TestApp;
  let u: TestUser;

  beforeAll(async () => {
    relay = await TcpRelay.toDatabase(serverUrl!);
    t = await createTestApp({ databaseUrl: (url) => relay.through(url) });
    u = await t.user();
  });
  // The test restores the relay itself, whatever happens in it.
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  it('every operation that lists the database away answers it while it is, with Retry-After; health still answers', async () => {
    const ops = operationsOf(await loadDocument(t));
    await relay.cut();
    try {
      for (const o of ops) {
        const res = await t.http[o.method](o.path.replace(/\{\w+\}/g, MISSING_ID)).set(as(u));
        if (o.name === `GET ${API}/health`) expect(res.status).toBe(200);
        else if (o.name === `GET ${API}/ready`) expect(answered(o, res)).toEqual({ op: o.name, status: 503, problem: true, type: 'SERVICE.NOT_READY' });
        else {
          expect(reasons(o, 503)).toMatch(/SERVICE\.UNAVAILABLE/);
          expect(answered(o, res)).toEqual({ op: o.name, status: 503, problem: true, type: 'SERVICE.UNAVAILABLE' });
          expect(res.headers['retry-after']).toBe('5');
        }
      }
    } finally {
      await relay.restore();
    }
  });
});
