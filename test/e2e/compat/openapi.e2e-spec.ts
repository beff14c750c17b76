import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { listen, send } from './raw-client.js';

interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: { required?: string[] } }> };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}
type Paths = Record<string, Record<string, Operation>>;

const API = '/api/1.0';

/** Issue 14.7: the OpenAPI document states what the original's clients rely on. */
describe('compatibility: the OpenAPI document', () => {
  let t: TestApp;
  let paths: Paths;
  let doc: { components: { securitySchemes: Record<string, { description?: string }> } };

  beforeAll(async () => {
    t = await createTestApp();
    const res = await send(`${await listen(t)}${API}/spec.json`, 'GET', {});
    doc = res.body as typeof doc;
    paths = (res.body as { paths: Paths }).paths;
  });
  afterAll(() => t.close());

  const operations = () => Object.entries(paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

  it('documents the routes added for the original’s clients', () => {
    for (const path of ['/projects/all', '/models/{id}', '/group-types/{id}/groups']) expect(paths[`${API}${path}`]).toHaveProperty('get');
  });

  it('documents every deletion as 200 {id, deleted}, and no answer as 204', () => {
    const deletions = operations().filter(({ method, path }) => method === 'delete' && path !== `${API}/cards/{id}/archive`);
    expect(deletions.length).toBeGreaterThanOrEqual(7);
    for (const { path, op } of deletions) {
      expect({ path, schema: op.responses['200']?.content?.['application/json']?.schema }).toEqual({
        path,
        schema: expect.objectContaining({ required: ['id', 'deleted'] }),
      });
    }
    expect(operations().filter(({ op }) => '204' in op.responses).map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });

  it('documents both pagination header families and Link on every paginated listing', () => {
    const listings = operations().filter(({ op }) => op.parameters?.some((p) => p.name === 'per_page'));
    expect(listings.map(({ path }) => path)).toEqual(
      expect.arrayContaining([`${API}/organizations`, `${API}/projects/all`, `${API}/projects/{id}/cards`, `${API}/cards/{id}/stream`]),
    );
    for (const { path, op } of listings) {
      expect({ path, headers: Object.keys(op.responses['200'].headers ?? {}) }).toEqual({
        path,
        headers: expect.arrayContaining(['X-Kantree-Page', 'X-Kantree-NextPage', 'X-Kantree-Total', 'X-Kantree-TotalPages', 'X-Service-Page', 'Link']),
      });
    }
  });

  it('says, on the listings that take a cursor, that Link carries it and that a cursor page has no page number', () => {
    const description = (op: Operation, header: string) => (op.responses['200'].headers?.[header] as { description: string }).description;
    const keyset = operations().filter(({ op }) => op.parameters?.some((p) => p.name === 'cursor'));
    expect(keyset.map(({ path }) => path).sort()).toEqual([`${API}/cards/{id}/stream`, `${API}/projects/{id}/cards`, `${API}/search`]);
    for (const { path, op } of keyset) {
      expect({ path, headers: Object.keys(op.responses['200'].headers ?? {}) }).toEqual({ path, headers: expect.arrayContaining(['X-Service-NextCursor']) });
      for (const header of ['X-Service-Page', 'X-Kantree-Page', 'X-Service-NextPage']) {
        expect({ path, header, description: description(op, header) }).toEqual({ path, header, description: expect.stringContaining('on a page asked for by `cursor`') });
      }
      expect({ path, link: description(op, 'Link') }).toEqual({ path, link: expect.stringContaining("carries the next page's `cursor`") });
    }
    const paged = operations().find(({ path, method }) => method === 'get' && path === `${API}/organizations`)!.op;
    expect(description(paged, 'X-Service-Page')).toBe('this page (from 1)');
    expect(description(paged, 'Link')).not.toMatch(/cursor/);
  });

  it('says Basic takes the key alone, and that the model body may omit model_id', () => {
    expect(doc.components.securitySchemes.basic.description).toMatch(/without a colon/);
    const setModel = paths[`${API}/cards/{id}/model`].post;
    expect(setModel.requestBody?.required).toBe(false);
    expect(setModel.requestBody?.content['application/json'].schema.required ?? []).not.toContain('model_id');
  });
});
