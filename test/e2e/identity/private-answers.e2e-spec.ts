import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

/**
 * An API key sent as X-Api-Key is a credential no cache knows of: RFC 9111
 * §3.5 keeps shared caches from storing answers to requests with an
 * Authorization header only. Without Cache-Control, a reverse proxy or CDN
 * in front of the API (Varnish caches such answers for 120 s by default)
 * could store a user's card and hand it to the next caller of the same URL,
 * credentials or not. Every authenticated answer says `private`.
 */
describe('answers to authenticated requests are private', () => {
  let t: TestApp;
  let ann: TestUser;
  let paths: string[];

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    const ws = workspaceClient(t);
    const org = await ws.team(ann);
    const project = await ws.project(ann, org);
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: 'mine' }).expect(201)).body;
    paths = [
      '/me',
      '/me/api-keys',
      '/organizations',
      `/organizations/${org}/members`,
      '/projects/all',
      `/projects/${project.id}`,
      `/projects/${project.id}/cards`,
      `/cards/${card.id}`,
      `/cards/${card.id}/stream`,
      '/search?filter=mine',
    ];
  });
  afterAll(() => t.close());

  it.each([
    ['X-Api-Key', () => as(ann)],
    ['Basic', () => ({ Authorization: `Basic ${Buffer.from(`${ann.apiKey}:`).toString('base64')}` })],
  ])('with the key as %s: Cache-Control private, no-cache on every read', async (_kind, headers) => {
    const wrong: string[] = [];
    for (const path of paths) {
      const res = await t.http.get(`${API}${path}`).set(headers());
      expect(res.status).toBe(200);
      if (res.headers['cache-control'] !== 'private, no-cache') wrong.push(`${path}: ${res.headers['cache-control']}`);
    }
    expect(wrong).toEqual([]);
  });

  it('on writes and refusals after authentication too', async () => {
    const created = await t.http.post(`${API}/me/api-keys`).set(as(ann)).send({ name: 'shown once' }).expect(201);
    expect(created.headers['cache-control']).toBe('private, no-cache');
    const missing = await t.http.get(`${API}/cards/987654321`).set(as(ann)).expect(404);
    expect(missing.headers['cache-control']).toBe('private, no-cache');
  });

  it('keeps revalidation: the ETag still answers 304', async () => {
    const first = await t.http.get(`${API}/me`).set(as(ann)).expect(200);
    await t.http.get(`${API}/me`).set(as(ann)).set('If-None-Match', first.headers.etag).expect(304);
  });
});
