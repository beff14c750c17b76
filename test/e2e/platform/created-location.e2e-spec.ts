import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Test } from 'supertest';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

// A creation's 201 names the created resource in `Location` (RFC 9110
// §10.2.2): its absolute URL under BASE_URL, here a proxy's whose path is not
// the server's own, so the header cannot come from the request. The 201
// operations are read from the OpenAPI document: a new one fails the first
// test until it is listed here, with a Location or a reason for none.

const BASE_URL = 'https://cards.example.test/behind-proxy/api/1.0';

/** The creations whose resource the API has no read of, so no URL to give; and why. */
const NO_READ: Record<string, string> = {
  'POST /organizations/{id}/members': "a member entry: the team's members are read only as a list, and the entry's id is the user's",
  'POST /cards/{id}/comments': "a comment: read only among the card's stream entries (GET /cards/{id}/stream)",
  'POST /me/api-keys': "an API key: the user's keys are read only as a list (GET /me/api-keys)",
  'POST /importers/spreadsheet/discover': 'an upload: its file_id is for the import call only, never read back',
};

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
}

describe('Location on every 201', () => {
  let t: TestApp;
  let u: TestUser;
  let doc: Document;
  let creations: Record<string, () => Test>;

  beforeAll(async () => {
    t = await createTestApp({ env: { BASE_URL } });
    u = await t.user();
    const other = await t.user();
    const post = (path: string, body?: object) => t.http.post(`${API}${path}`).set(as(u)).send(body);
    const w = workspaceClient(t);
    const org = await w.team(u);
    const project = await w.project(u, org);
    const top = project.top_level_card_id;
    const model = (await post(`/projects/${project.id}/models`, { name: 'Bug' }).expect(201)).body as { id: number };
    const type = (await post(`/projects/${project.id}/group-types`, { name: 'Labels' }).expect(201)).body as { id: number };
    creations = {
      'POST /organizations': () => post('/organizations', { name: 'Located' }),
      'POST /organizations/{id}/members': () => post(`/organizations/${org}/members`, { user: other.id }),
      'POST /organizations/{id}/projects': () => post(`/organizations/${org}/projects`, { title: 'Located' }),
      'POST /projects/{id}/attributes': () => post(`/projects/${project.id}/attributes`, { name: 'Estimate', type: 'number' }),
      'POST /projects/{id}/models': () => post(`/projects/${project.id}/models`, { name: 'Task' }),
      'POST /models/{id}/attributes': () => post(`/models/${model.id}/attributes`, { name: 'Steps', type: 'text' }),
      'POST /projects/{id}/group-types': () => post(`/projects/${project.id}/group-types`, { name: 'Teams' }),
      'POST /cards/{id}/children': () => post(`/cards/${top}/children`, { title: 'Located' }),
      'POST /cards/{id}/groups': () => post(`/cards/${top}/groups`, { type_id: type.id, title: 'Red' }),
      'POST /cards/{id}/comments': () => post(`/cards/${top}/comments`, { content: 'hello' }),
      'POST /me/api-keys': () => post('/me/api-keys', { name: 'located' }),
      'POST /importers/spreadsheet/discover': () =>
        t.http.post(`${API}/importers/spreadsheet/discover`).set(as(u)).attach('file', Buffer.from('title\nOne\n'), 'rows.csv'),
    };
    doc = (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
  });
  afterAll(() => t.close());

  /** `POST /cards/{id}/children` for each operation the document says answers 201, with its 201's documented headers. */
  const documentedCreations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => '201' in op.responses)
        .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path.slice(API.length)}`, headers: Object.keys(op.responses['201'].headers ?? {}) })),
    );

  it('covers every operation the OpenAPI document says answers 201', () => {
    expect(Object.keys(creations).sort()).toEqual(documentedCreations().map((c) => c.name).sort());
  });

  it('documents Location on the 201 of every creation the API can read back, and on no other', () => {
    for (const { name, headers } of documentedCreations()) {
      expect({ name, location: headers.includes('Location') }).toEqual({ name, location: !(name in NO_READ) });
    }
  });

  it('answers Location: the absolute URL under BASE_URL whose GET, with the same credentials, reads the created resource', async () => {
    for (const name of Object.keys(creations).filter((n) => !(n in NO_READ))) {
      const res = await creations[name]().expect(201);
      const location = String(res.headers.location);
      expect({ name, location }).toEqual({ name, location: expect.stringMatching(new RegExp(`^${BASE_URL.replaceAll('.', '\\.')}/[a-z-]+/${res.body.id}$`)) });
      const read = await t.http.get(API + location.slice(BASE_URL.length)).set(as(u));
      expect({ name, status: read.status, id: read.body.id }).toEqual({ name, status: 200, id: res.body.id });
    }
  });

  it('answers no Location where the API has no read of what was created', async () => {
    for (const name of Object.keys(NO_READ)) {
      const res = await creations[name]().expect(201);
      expect({ name, location: res.headers.location }).toEqual({ name, location: undefined });
    }
  });
});
