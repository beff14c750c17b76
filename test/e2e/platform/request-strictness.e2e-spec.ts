import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const API = '/api/1.0';

function expectProblem(res: Response, status: number): void {
  expect({ status: res.status, type: res.headers['content-type'], body: res.body.status }).toEqual({
    status,
    type: expect.stringMatching(/^application\/problem\+json/),
    body: status,
  });
}

/**
 * DESIGN.md §2: what a request may carry, and what it may not. A body the API
 * cannot read is refused (415) rather than ignored; a query parameter a
 * listing does not take is refused (400) rather than ignored; a path that
 * does not decode names nothing (404).
 */
describe('request strictness', () => {
  let t: TestApp;
  let ann: TestUser;
  let org: number;
  let project: { id: number; top_level_card_id: number };
  let card: number;
  let model: number;
  let groupType: number;

  const getCard = async (id: number) => (await t.http.get(`${API}/cards/${id}`).set(as(ann)).expect(200)).body;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    org = (await t.http.post(`${API}/organizations`).set(as(ann)).send({ name: 'o' }).expect(201)).body.id;
    project = (await t.http.post(`${API}/organizations/${org}/projects`).set(as(ann)).send({ title: 'p' }).expect(201)).body;
    const top = project.top_level_card_id;
    card = (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'first' }).expect(201)).body.id;
    await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'second' }).expect(201);
    model = (await t.http.post(`${API}/projects/${project.id}/models`).set(as(ann)).send({ name: 'Bug' }).expect(201)).body.id;
    groupType = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(ann)).send({ name: 'Status' }).expect(201)).body.id;
    await t.http.post(`${API}/cards/${card}/model`).set(as(ann)).send({ model_id: model }).expect(200);
    await t.http.post(`${API}/cards/${card}/comments`).set(as(ann)).send({ content: 'hello' }).expect(201);
  });
  afterAll(() => t.close());

  describe('a body of a media type the API does not read', () => {
    const UNREAD = ['text/plain', 'application/xml', 'application/octet-stream', 'text/plain; charset=utf-8'];

    it('is a 415 naming the accepted types, and changes nothing', async () => {
      const keys = async () => (await t.http.get(`${API}/me/api-keys`).set(as(ann)).expect(200)).body.length;
      const keysBefore = await keys();
      const before = await getCard(card);
      expect(before).toMatchObject({ model_id: model, position: 0 });
      for (const type of UNREAD) {
        const writes = [
          t.http.post(`${API}/cards/${card}/model`).set('Content-Type', type).send('{"model_id":1}'),
          t.http.post(`${API}/cards/${card}/relocate`).set('Content-Type', type).send('{"position":1}'),
          t.http.post(`${API}/me/api-keys`).set('Content-Type', type).send('{"name":"k"}'),
          // the query string does not stand in for a body that was sent
          t.http.post(`${API}/cards/${project.top_level_card_id}/children`).query({ title: 'from the query' }).set('Content-Type', type).send('{"title":"x"}'),
          t.http.put(`${API}/cards/${card}`).set('Content-Type', type).send('{"title":"renamed"}'),
        ];
        for (const pending of writes) {
          const res = await pending.set(as(ann));
          expectProblem(res, 415);
          expect(res.body.detail).toMatch(/application\/json.*application\/x-www-form-urlencoded.*multipart\/form-data/);
          expect(res.headers.accept).toMatch(/application\/json/);
        }
      }
      expect(await getCard(card)).toEqual(before);
      expect(await keys()).toBe(keysBefore);
      const children = (await t.http.get(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).expect(200)).body;
      expect(children.map((c: { title: string }) => c.title)).toEqual(['first', 'second']);
    });

    it('is a 415 also without a Content-Type, and when sent in chunks', async () => {
      const before = await getCard(card);
      const bare = await t.http.post(`${API}/cards/${card}/model`).set(as(ann)).set('Content-Type', '').send(Buffer.from('{"model_id":null}'));
      expectProblem(bare, 415);
      const chunked = t.http.post(`${API}/cards/${card}/model`).set(as(ann)).set('Content-Type', 'text/plain');
      chunked.write('{"model_id"');
      chunked.write(':null}');
      expectProblem(await chunked, 415);
      expect(await getCard(card)).toEqual(before);
    });

    it('does not stop a bodyless request whatever its Content-Type says', async () => {
      const made = await t.http
        .post(`${API}/cards/${project.top_level_card_id}/children`)
        .query({ title: 'bodyless' })
        .set(as(ann))
        .set('Content-Type', 'text/plain')
        .set('Content-Length', '0')
        .expect(201);
      expect(made.body.title).toBe('bodyless');
      await t.http.delete(`${API}/cards/${made.body.id}`).set(as(ann)).set('Content-Type', 'application/xml').expect(200);
    });

    it('still takes JSON (also application/*+json), form fields and multipart fields', async () => {
      const top = project.top_level_card_id;
      const titles = [
        (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).set('Content-Type', 'application/json; charset=utf-8').send('{"title":"json"}').expect(201)).body.title,
        (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).set('Content-Type', 'application/vnd.cardwork+json').send('{"title":"+json"}').expect(201)).body.title,
        (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).type('form').send({ title: 'form' }).expect(201)).body.title,
        (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).field('title', 'multipart').expect(201)).body.title,
      ];
      expect(titles).toEqual(['json', '+json', 'form', 'multipart']);
    });

    it('reads a JSON body, even {}, instead of the query string', async () => {
      const made = await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).query({ title: 'q' }).set(as(ann)).send({}).expect(400);
      expect(made.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'title' })]));
      const other = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: 'third' }).expect(201)).body;
      const kept = await t.http.post(`${API}/cards/${other.id}/state`).query({ state: 'closed' }).set(as(ann)).send({}).expect(400);
      expect(kept.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'state' })]));
      expect((await getCard(other.id)).state).toBe(other.state);
    });
  });

  describe('the 415 in the OpenAPI document', () => {
    interface Answer {
      description: string;
      headers?: Record<string, unknown>;
      content?: Record<string, { schema: { $ref?: string } }>;
    }
    interface Document {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, Answer> }>>;
      components: { schemas: Record<string, { required?: string[] }> };
    }
    const load = async () => (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
    const operations = (doc: Document) =>
      Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));

    it('is listed, as problem+json with Accept, on every operation: one that takes no body is still sent one', async () => {
      const doc = await load();
      const all = operations(doc);
      // only the API's routes are documented: the web pages and /oauth/* answer their own
      expect(all.filter(({ path }) => !path.startsWith(`${API}/`))).toEqual([]);
      expect(all.filter(({ op }) => op.requestBody).length).toBeGreaterThanOrEqual(25);
      for (const { path, method, op } of all) {
        expect({ path, method, answer: op.responses['415'] }).toEqual({
          path,
          method,
          answer: {
            description: expect.stringMatching(/^(.*Also: )?INPUT\.UNSUPPORTED_MEDIA: a request body of a media type the API does not read/),
            headers: { Accept: expect.objectContaining({ schema: expect.objectContaining({ type: 'string' }) }) },
            content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
          },
        });
      }
      expect(doc.components.schemas.Problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'error']));
      // the spreadsheet's own 415 keeps its words
      expect(doc.paths[`${API}/importers/spreadsheet/discover`].post.responses['415'].description).toMatch(/^INPUT\.UNSUPPORTED_MEDIA: the file is not XLSX, CSV or ODS\. Also: INPUT\.UNSUPPORTED_MEDIA: /);
    });

    it('is what each operation answers to a text/plain body, reads and bodiless writes too', async () => {
      const all = operations(await load());
      expect(all.filter(({ op }) => !op.requestBody).length).toBeGreaterThan(20);
      for (const { path, method } of all) {
        const url = path.replace(/\{attr\}/g, 'Status').replace(/\{\w+\}/g, String(card));
        const res = await t.http[method as 'get' | 'post' | 'put' | 'delete' | 'patch'](url).set(as(ann)).set('Content-Type', 'text/plain').send('{}');
        expect({ path, method, status: res.status, type: res.headers['content-type'] }).toEqual({
          path,
          method,
          status: 415,
          type: expect.stringMatching(/^application\/problem\+json/),
        });
      }
    });
  });

  describe("a listing's query parameters", () => {
    const paginated = () => [
      '/organizations',
      `/organizations/${org}/projects`,
      '/projects/all',
      `/cards/${card}/stream`,
      `/projects/${project.id}/cards`,
      '/search?filter=first',
    ];
    const whole = () => [
      `/organizations/${org}/members`,
      `/projects/${project.id}/models`,
      `/projects/${project.id}/attributes`,
      `/projects/${project.id}/group-types`,
      `/group-types/${groupType}/groups`,
      `/models/${model}/attributes`,
      '/me/api-keys',
      '/attribute-types',
      `/cards/${card}/children`,
      `/cards/${card}/groups`,
      `/cards/${card}/attributes/Status/choices`,
    ];
    const withQuery = (path: string, query: string) => `${API}${path}${path.includes('?') ? '&' : '?'}${query}`;
    const expectRefused = async (path: string, query: string) => {
      const res = await t.http.get(withQuery(path, query)).set(as(ann));
      expect({ path, query, status: res.status, problem: res.headers['content-type'] }).toEqual({
        path,
        query,
        status: 400,
        problem: expect.stringMatching(/^application\/problem\+json/),
      });
    };

    it('answers every listing without them', async () => {
      for (const path of [...paginated(), ...whole()]) {
        const res = await t.http.get(`${API}${path}`).set(as(ann));
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
      }
    });

    it('refuses a page out of range, and a cursor where the listing has none, on every paginated listing', async () => {
      const cursors = new Set([`/projects/${project.id}/cards`, '/search?filter=first', `/cards/${card}/stream`]);
      for (const path of paginated()) {
        const bad = ['page=-1', 'page=0', 'page=x', 'page=1.5', 'per_page=0', 'per_page=1001', 'per_page=-5', 'cursor=garbage', 'cursor=x&page=2', 'color=red'];
        for (const query of bad) {
          await expectRefused(path, query);
        }
        const ok = await t.http.get(withQuery(path, 'page=1&per_page=1')).set(as(ann));
        expect({ path, status: ok.status, page: ok.headers['x-service-page'] }).toEqual({ path, status: 200, page: '1' });
        if (!cursors.has(path)) expect(ok.headers['x-service-nextcursor']).toBeUndefined();
      }
    });

    it('refuses page, per_page, cursor and unknown parameters on every listing that answers all its items', async () => {
      for (const path of whole()) {
        for (const query of ['page=1', 'per_page=10', 'page=-1', 'per_page=0', 'cursor=garbage', 'color=red']) {
          await expectRefused(path, query);
        }
      }
      // the parameters a listing does take still work
      await t.http.get(`${API}/cards/${card}/groups`).query({ type_id: String(groupType) }).set(as(ann)).expect(200);
      await t.http.get(`${API}/cards/${card}/children`).query({ with_archived: 'true', only_ids: 'true' }).set(as(ann)).expect(200);
    });
  });

  /**
   * The operations that declare no query or body (a card's read, archive,
   * deletion…) refuse a parameter as the others do, naming it; before, they
   * ignored it: `DELETE /cards/{id}` with `{"force":true}` deleted.
   */
  describe('a parameter an operation without parameters does not take', () => {
    it('is a 400 naming it, and changes nothing', async () => {
      const top = project.top_level_card_id;
      const doomed = (await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'doomed' }).expect(201)).body.id;
      for (const path of [`/cards/${doomed}`, '/me', `/projects/${project.id}`, `/organizations/${org}`, `/models/${model}`, `/group-types/${groupType}`]) {
        const res = await t.http.get(`${API}${path}`).query({ fields: 'title' }).set(as(ann));
        expect({ path, status: res.status, errors: res.body.errors }).toEqual({ path, status: 400, errors: [{ field: 'fields', message: 'property fields should not exist' }] });
        const fromBody = await t.http.get(`${API}${path}`).set(as(ann)).send({ fields: 'title' });
        expect({ path, status: fromBody.status }).toEqual({ path, status: 400 });
        await t.http.get(`${API}${path}`).set(as(ann)).expect(200);
      }
      const refused = [
        await t.http.delete(`${API}/cards/${doomed}`).set(as(ann)).send({ force: true }),
        await t.http.delete(`${API}/cards/${doomed}`).query({ force: 'true' }).set(as(ann)),
        await t.http.post(`${API}/cards/${doomed}/archive`).set(as(ann)).send({ recursive: false }),
        await t.http.post(`${API}/cards/${doomed}/archive`).query({ recursive: 'false' }).set(as(ann)),
      ];
      expect(refused.map((r) => [r.status, r.body.errors?.[0]?.field])).toEqual([[400, 'force'], [400, 'force'], [400, 'recursive'], [400, 'recursive']]);
      expect((await getCard(doomed)).is_archived).toBe(false);
      // Who may not ask is told so first.
      await t.http.get(`${API}/cards/${doomed}`).query({ fields: 'title' }).expect(401);
      await t.http.post(`${API}/cards/${doomed}/archive`).set(as(ann)).send({}).expect(200);
      await t.http.delete(`${API}/cards/${doomed}`).set(as(ann)).expect(200);
    });
  });

  /**
   * More parameters than any operation takes are refused at once, in one
   * error: checking each unknown one grew with the square of their number
   * (80 000 held every request for 6 s) and answered one error each (12 MB).
   */
  describe('a request with thousands of parameters', () => {
    it('is a 400 saying how many, with one error, and changes nothing', async () => {
      const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, 1]));
      const top = project.top_level_card_id;
      const before = (await t.http.get(`${API}/cards/${top}/children`).set(as(ann)).expect(200)).body.length;
      const answers = [
        await t.http.get(`${API}/projects/${project.id}/cards`).set(as(ann)).send(many),
        await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'many', ...many }),
        await t.http.delete(`${API}/cards/${card}`).set(as(ann)).send(many),
      ];
      for (const res of answers) {
        expect([res.status, res.body.errors]).toEqual([400, [{ field: '(parameters)', message: expect.stringMatching(/^500\d parameters sent; an operation takes at most 100$/) }]]);
      }
      expect((await t.http.get(`${API}/cards/${top}/children`).set(as(ann)).expect(200)).body.length).toBe(before);
      await getCard(card);
    });
  });

  describe('a path that does not decode', () => {
    it('names nothing: 404 problem+json on every route', async () => {
      for (const path of ['/cards/%C0%80', '/cards/%E0%A4%A', '/cards/%FF/children', '/organizations/%E0%A4%A/members', `/cards/${card}/attributes/%C0%80/choices`]) {
        const res = await t.http.get(`${API}${path}`).set(as(ann));
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expectProblem(res, 404);
        expect(res.body.detail).not.toMatch(/decode/i);
      }
      expectProblem(await t.http.post(`${API}/cards/%C0%80/relocate`).set(as(ann)).send({ position: 0 }), 404);
      expectProblem(await t.http.delete(`${API}/cards/%E0%A4%A`).set(as(ann)), 404);
    });
  });
});
