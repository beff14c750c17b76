import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

describe('HTTP conventions', () => {
  let t: TestApp;
  let ann: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
  });
  afterAll(() => t.close());

  it('serves health and readiness without credentials', async () => {
    await t.http.get('/api/1.0/health').expect(200, { status: 'ok' });
    await t.http.get('/api/1.0/ready').expect(200, { status: 'ready' });
  });

  it("builds each request and response on Express's prototypes, so Express need not swap them per request", async () => {
    // A listener ahead of Express's sees the objects as the HTTP server made them.
    const express = t.app.getHttpAdapter().getInstance() as { request: object; response: object };
    const seen: boolean[] = [];
    const look = (req: object, res: object) => seen.push(Object.getPrototypeOf(req) === express.request, Object.getPrototypeOf(res) === express.response);
    const server = t.app.getHttpServer();
    server.prependListener('request', look);
    try {
      await t.http.get('/api/1.0/me').set(as(ann)).expect(200);
      await t.http.get('/api/1.0/health').expect(200, { status: 'ok' });
    } finally {
      server.off('request', look);
    }
    expect(seen).toEqual([true, true, true, true]);
  });

  it('tags answers to reads with an ETag (If-None-Match gives 304), and answers to writes without one', async () => {
    const bea = await t.user();
    const org = await t.http.post('/api/1.0/organizations').set(as(bea)).send({ name: 'Tagged' }).expect(201);
    expect(org.headers.etag).toBeUndefined();
    const project = await t.http.post(`/api/1.0/organizations/${org.body.id}/projects`).set(as(bea)).send({ title: 'Tagged' }).expect(201);
    expect(project.headers.etag).toBeUndefined();
    const renamed = await t.http.put(`/api/1.0/cards/${project.body.top_level_card_id}`).set(as(bea)).send({ title: 'Renamed' }).expect(200);
    expect(renamed.headers.etag).toBeUndefined();
    const read = await t.http.get(`/api/1.0/organizations/${org.body.id}`).set(as(bea)).expect(200);
    expect(read.headers.etag).toMatch(/^W\/".+"$/);
    await t.http.get(`/api/1.0/organizations/${org.body.id}`).set(as(bea)).set('If-None-Match', read.headers.etag).expect(304);
    const head = await t.http.head(`/api/1.0/organizations/${org.body.id}`).set(as(bea)).expect(200);
    expect(head.headers.etag).toBe(read.headers.etag);
    // An error answer to a read is tagged as before; the next write's answer is not.
    expect((await t.http.get('/api/1.0/organizations/999999999').set(as(bea)).expect(404)).headers.etag).toBeDefined();
    const card = await t.http.post(`/api/1.0/cards/${project.body.top_level_card_id}/children`).set(as(bea)).send({ title: 'x' }).expect(201);
    expect(card.headers.etag).toBeUndefined();
  });

  it('does not advertise the framework', async () => {
    const res = await t.http.get('/api/1.0/health');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('serves an OpenAPI document generated from the routes', async () => {
    const res = await t.http.get('/api/1.0/spec.json').expect(200);
    expect(res.body.openapi).toMatch(/^3\./);
    for (const path of [
      '/api/1.0/me',
      '/api/1.0/organizations',
      '/api/1.0/organizations/{id}/members',
      '/api/1.0/organizations/{id}/projects',
      '/api/1.0/projects/{id}',
      '/api/1.0/cards/{id}/children',
      '/api/1.0/projects/{id}/cards',
    ]) {
      expect(Object.keys(res.body.paths)).toContain(path);
    }
  });

  it('documents every route the app serves in the OpenAPI document', async () => {
    const { body: doc } = await t.http.get('/api/1.0/spec.json').expect(200);
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, object>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, ':p')}`);
    }
    type Layer = { route?: { path: string; methods: Record<string, boolean> } };
    const router = (t.app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } });
    const stack = (router.router ?? router._router)!.stack;
    const served = stack
      .filter((l) => l.route && l.route.path.startsWith('/api/1.0/') && !l.route.path.endsWith('spec.json'))
      .flatMap((l) => Object.keys(l.route!.methods).map((m) => `${m.toUpperCase()} ${l.route!.path.replace(/:[A-Za-z]+/g, ':p')}`));
    expect(served.length).toBeGreaterThan(40);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('answers malformed JSON with 400 problem+json', async () => {
    const res = await t.http
      .post('/api/1.0/organizations')
      .set(as(ann))
      .set('Content-Type', 'application/json')
      .send('{"name": "x",')
      .expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toMatch(/Malformed JSON/);
  });

  it('says a valid JSON body that is not an object must be one, rather than calling it malformed', async () => {
    for (const [body, kind] of [['null', 'null'], ['42', 'number'], ['"x"', 'string'], [' true ', 'boolean']]) {
      const res = await t.http.post('/api/1.0/organizations').set(as(ann)).set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toBe(`The request body must be a JSON object, not ${kind}`);
    }
    await t.http.get('/api/1.0/organizations').set(as(ann)).expect(200, []);
  });

  it('answers a body over 1 MiB with 413 and creates nothing', async () => {
    const res = await t.http
      .post('/api/1.0/organizations')
      .set(as(ann))
      .send({ name: 'x'.repeat(1024 * 1024 + 10) })
      .expect(413);
    expect(res.body.status).toBe(413);
    const list = await t.http.get('/api/1.0/organizations').set(as(ann)).expect(200);
    expect(list.body).toEqual([]);
  });

  it('refuses unknown properties and wrong types, naming the field', async () => {
    const unknown = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'A', color: 'red' }).expect(400);
    expect(unknown.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'color' })]));
    const wrong = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 42 }).expect(400);
    expect(wrong.body.errors[0].field).toBe('name');
    const long = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'n'.repeat(1025) }).expect(400);
    expect(long.body.type).toBe('INPUT.INVALID');
    await t.http.get('/api/1.0/organizations').set(as(ann)).expect(200, []);
  });

  it('answers unknown routes with 404 problem+json', async () => {
    const res = await t.http.get('/api/1.0/nowhere').set(as(ann)).expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  /**
   * A path the API has, asked with a method none of its routes takes, is a
   * 405 naming the methods it takes (RFC 9110 §15.5.6), not a 404 that a
   * client reads as "gone"; OPTIONS answers them (204). A path nothing
   * serves stays a 404 for every method.
   */
  it('answers a method a path does not take with 405 and Allow, and OPTIONS with the methods', async () => {
    const card = await t.http.patch('/api/1.0/cards/12345').set(as(ann)).expect(405);
    expect(card.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect([card.headers.allow, card.body.type]).toEqual(['DELETE, GET, HEAD, OPTIONS, PUT', 'HTTP.405']);
    expect(card.body.detail).toBe('PATCH is not a method of this path; it takes DELETE, GET, HEAD, OPTIONS, PUT');
    // Without credentials too: what a path takes is in the public OpenAPI document.
    const me = await t.http.post('/api/1.0/me').expect(405);
    expect(me.headers.allow).toBe('GET, HEAD, OPTIONS');
    await t.http.delete('/api/1.0/cards/1/children/').set(as(ann)).expect(405); // a trailing slash is the same path
    const options = await t.http.options('/api/1.0/projects/7/cards').expect(204);
    expect([options.headers.allow, options.text]).toEqual(['GET, HEAD, OPTIONS', '']);
    await t.http.options('/api/1.0/nowhere').expect(404);
    await t.http.patch('/api/1.0/nowhere').set(as(ann)).expect(404);
  });

  /**
   * `/projects/all` is a literal route; `/projects/:id` cannot take `all` (an
   * id is a positive integer), so its methods are not the path's: DELETE there
   * is a 405 like PATCH, not a 404 for a project named `all`.
   */
  it('lists at a literal path only its own methods, not those of an :id route beside it', async () => {
    const options = await t.http.options('/api/1.0/projects/all').expect(204);
    expect(options.headers.allow).toBe('GET, HEAD, OPTIONS');
    for (const method of ['delete', 'patch', 'put'] as const) {
      const res = await t.http[method]('/api/1.0/projects/all').set(as(ann));
      expect({ method, status: res.status, type: res.body.type, allow: res.headers.allow }).toEqual({ method, status: 405, type: 'HTTP.405', allow: 'GET, HEAD, OPTIONS' });
    }
    await t.http.get('/api/1.0/projects/all').set(as(ann)).expect(200);
    // An id route still has its methods, and a path that is not an id still names nothing.
    expect((await t.http.options('/api/1.0/projects/7').expect(204)).headers.allow).toBe('DELETE, GET, HEAD, OPTIONS');
    await t.http.delete('/api/1.0/projects/12345').set(as(ann)).expect(404);
    await t.http.get('/api/1.0/organizations/all').set(as(ann)).expect(404);
  });

  it('answers non-numeric ids with 404', async () => {
    await t.http.get('/api/1.0/organizations/abc').set(as(ann)).expect(404);
    await t.http.get('/api/1.0/projects/-1').set(as(ann)).expect(404);
  });
});
