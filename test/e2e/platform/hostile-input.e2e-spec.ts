import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

// Strings PostgreSQL cannot store (NUL, unpaired surrogates) and odd JSON
// shapes, sent to every kind of write: always a 4xx problem+json, never a 500,
// and nothing written.
describe('hostile input', () => {
  let t: TestApp;
  let u: TestUser;
  let org: { id: number };
  let project: { id: number; top_level_card_id: number };
  let card: { id: number; title: string };

  beforeAll(async () => {
    t = await createTestApp();
    u = await t.user();
    org = (await t.http.post('/api/1.0/organizations').set(as(u)).send({ name: 'o' }).expect(201)).body;
    project = (await t.http.post(`/api/1.0/organizations/${org.id}/projects`).set(as(u)).send({ title: 'p' }).expect(201)).body;
    card = (await t.http.post(`/api/1.0/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'c' }).expect(201)).body;
    await t.http.post(`/api/1.0/projects/${project.id}/attributes`).set(as(u)).send({ name: 'Notes', type: 'text' }).expect(201);
  });
  afterAll(() => t.close());

  const expectProblem = (res: { status: number; headers: Record<string, string>; body: { status: number } }, status = 400) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(status);
  };

  it.each([
    ['NUL', 'a\u0000b'],
    ['an unpaired high surrogate', 'x\ud800'],
    ['an unpaired low surrogate', '\udc00x'],
  ])('refuses %s in every kind of string and writes nothing', async (_label, bad) => {
    const writes = [
      t.http.post('/api/1.0/organizations').set(as(u)).send({ name: bad }),
      t.http.post(`/api/1.0/organizations/${org.id}/projects`).set(as(u)).send({ title: bad }),
      t.http.post(`/api/1.0/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: bad }),
      t.http.put(`/api/1.0/cards/${card.id}`).set(as(u)).send({ title: bad }),
      t.http.post(`/api/1.0/cards/${card.id}/comments`).set(as(u)).send({ content: bad }),
      t.http.post('/api/1.0/me/api-keys').set(as(u)).send({ name: bad }),
      t.http.post(`/api/1.0/projects/${project.id}/attributes`).set(as(u)).send({ name: bad, type: 'text' }),
      t.http.post(`/api/1.0/cards/${card.id}/attributes`).set(as(u)).send({ [bad]: 1 }),
      t.http.post(`/api/1.0/cards/${card.id}/attributes/${encodeURIComponent('Notes')}`).set(as(u)).send({ value: bad }),
      // A query string cannot carry an unpaired surrogate: the client's encoder
      // (qs) sends U+FFFD in its place, which is a valid filter word. NUL it can.
      ...(bad.includes('\u0000') ? [t.http.get(`/api/1.0/projects/${project.id}/cards`).query({ filter: bad }).set(as(u))] : []),
    ];
    for (const res of await Promise.all(writes)) {
      expectProblem(res);
      expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at /);
    }
    const orgs = await t.http.get('/api/1.0/organizations').set(as(u)).expect(200);
    expect(orgs.body).toHaveLength(1);
    const listing = await t.http.get(`/api/1.0/projects/${project.id}/cards`).set(as(u)).expect(200);
    expect(listing.body.map((c: { title: string }) => c.title)).toEqual(['c']);
    const now = await t.http.get(`/api/1.0/cards/${card.id}`).set(as(u)).expect(200);
    expect(now.body.attributes.Notes).toBeNull();
    const stream = await t.http.get(`/api/1.0/cards/${card.id}/stream`).set(as(u)).expect(200);
    expect(stream.body.filter((e: { kind: string }) => e.kind === 'comment')).toEqual([]);
  });

  it('refuses bodies of the wrong JSON shape', async () => {
    expectProblem(await t.http.post(`/api/1.0/cards/${card.id}/comments`).set(as(u)).send([1, 2]));
    expectProblem(
      await t.http.post(`/api/1.0/cards/${card.id}/comments`).set(as(u)).set('Content-Type', 'application/json').send('"x"'),
    );
    expectProblem(
      await t.http
        .post(`/api/1.0/cards/${card.id}/attributes`)
        .set(as(u))
        .set('Content-Type', 'application/json')
        .send('{"__proto__":{"polluted":true}}'),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses out-of-range and non-integer ids', async () => {
    expectProblem(await t.http.get('/api/1.0/cards/99999999999999999999').set(as(u)), 404);
    expectProblem(await t.http.post(`/api/1.0/cards/${card.id}/relocate`).set(as(u)).send({ parent_id: 1.5 }));
    expectProblem(await t.http.post(`/api/1.0/cards/${card.id}/relocate`).set(as(u)).send({ parent_id: 1e300 }));
    expectProblem(await t.http.get(`/api/1.0/projects/${project.id}/cards?page=1&page=2`).set(as(u)));
    const after = await t.http.get(`/api/1.0/cards/${card.id}`).set(as(u)).expect(200);
    expect(after.body.parent_id).toBe(project.top_level_card_id);
  });
});
