import { afterAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';

interface Document {
  servers: Array<{ url: string }>;
  paths: Record<string, unknown>;
}

/**
 * A generated client calls the document's `servers[0].url` followed by a
 * path: that must be the URL BASE_URL gives the same resource, as `Link` and
 * `Location` do. With a BASE_URL not ending in /api/1.0 (a proxy mapping /v1
 * onto it) the document said `https://api.example.test/v1` and
 * `/api/1.0/organizations`, so clients called `/v1/api/1.0/organizations`.
 */
describe('OpenAPI servers and paths follow BASE_URL', () => {
  const apps: TestApp[] = [];
  afterAll(() => Promise.all(apps.map((t) => t.close())));

  /** The document, the Location of a new team and the Link to the second page of the teams, under BASE_URL. */
  async function served(baseUrl: string): Promise<{ doc: Document; location: string; next: string }> {
    const t = await createTestApp({ env: { BASE_URL: baseUrl } });
    apps.push(t);
    const u = await t.user();
    await t.http.post(`${API}/organizations`).set(as(u)).send({ name: 'First' }).expect(201);
    const created = await t.http.post(`${API}/organizations`).set(as(u)).send({ name: 'Second' }).expect(201);
    const page = await t.http.get(`${API}/organizations?per_page=1`).set(as(u)).expect(200);
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.link)![1];
    const doc = (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
    return { doc, location: created.headers.location.replace(/\/\d+$/, '/{id}'), next: next.replace(/\?.*$/, '') };
  }

  it('with a BASE_URL of its own path, servers is BASE_URL and the paths start after /api/1.0', async () => {
    const { doc, location, next } = await served('https://api.example.test/v1');
    expect(doc.servers).toEqual([{ url: 'https://api.example.test/v1' }]);
    expect(Object.keys(doc.paths).filter((path) => path.startsWith(API))).toEqual([]);
    expect(doc.paths).toHaveProperty(['/organizations']);
    expect(doc.paths).toHaveProperty(['/organizations/{id}']);
    expect(`${doc.servers[0].url}/organizations`).toBe(next);
    expect(`${doc.servers[0].url}/organizations/{id}`).toBe(location);
  });

  it('with a BASE_URL ending in /api/1.0, servers is what comes before it and the paths keep it, as before', async () => {
    const { doc, location, next } = await served('https://cards.example.test/behind-proxy/api/1.0');
    expect(doc.servers).toEqual([{ url: 'https://cards.example.test/behind-proxy' }]);
    expect(Object.keys(doc.paths).filter((path) => !path.startsWith(`${API}/`))).toEqual([]);
    expect(`${doc.servers[0].url}${API}/organizations`).toBe(next);
    expect(`${doc.servers[0].url}${API}/organizations/{id}`).toBe(location);
  });
});
