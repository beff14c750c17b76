import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { listen, rawClient, type RawClient, type RawProject } from './raw-client.js';

/** Issue 14.2: GET /projects/all, every project the caller sees, across teams. */
describe('compatibility: GET /projects/all', () => {
  let t: TestApp;
  let bob: TestUser;
  let ann: RawClient;
  let bobs: RawClient;
  let eves: RawClient;
  let teamB: number;
  const annSees: RawProject[] = [];
  const bobSees: RawProject[] = [];

  const team = (c: RawClient, name: string) => c.json<{ id: number }>('POST', '/organizations', { name }, 201).then((o) => o.id);
  const project = (c: RawClient, org: number, title: string) =>
    c.json<RawProject>('POST', `/organizations/${org}/projects`, { title }, 201);
  const ids = (projects: RawProject[]) => projects.map((p) => p.id).sort((a, b) => a - b);

  beforeAll(async () => {
    t = await createTestApp();
    const origin = await listen(t);
    bob = await t.user();
    ann = rawClient(origin, (await t.user()).apiKey);
    bobs = rawClient(origin, bob.apiKey);
    eves = rawClient(origin, (await t.user()).apiKey);
    // ann: teams A and B; bob: team C, and a viewer in B. Creation is interleaved so ids of teams mix.
    const teamA = await team(ann, 'A');
    const teamC = await team(bobs, 'C');
    teamB = await team(ann, 'B');
    await ann.json('POST', `/organizations/${teamB}/members`, { user: `@${bob.username}`, role: 'viewer' }, 201);
    annSees.push(await project(ann, teamA, 'A1'));
    bobSees.push(await project(bobs, teamC, 'C1'));
    const b1 = await project(ann, teamB, 'B1');
    annSees.push(b1);
    bobSees.push(b1);
    annSees.push(await project(ann, teamA, 'A2'));
    bobSees.push(await project(bobs, teamC, 'C2'));
  });
  afterAll(() => t.close());

  it('lists the projects of every team of the caller, by id, and never another team’s', async () => {
    const mine = await ann.call('GET', '/projects/all');
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([...annSees].sort((a, b) => a.id - b.id).map((p) => expect.objectContaining(p)));
    expect(mine.headers.get('x-kantree-total')).toBe('3');

    const his = await bobs.json<RawProject[]>('GET', '/projects/all', undefined, 200);
    expect(his.map((p) => p.id)).toEqual(ids(bobSees));
    expect(his.map((p) => p.title)).not.toContain('A1');

    expect(await eves.json('GET', '/projects/all', undefined, 200)).toEqual([]);
  });

  it('is paginated like the other listings', async () => {
    const seen: number[] = [];
    let next: string | null = '1';
    while (next) {
      const res = await ann.call('GET', `/projects/all?per_page=2&page=${next}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-kantree-totalpages')).toBe('2');
      seen.push(...(res.body as RawProject[]).map((p) => p.id));
      next = res.headers.get('x-kantree-nextpage');
    }
    expect(seen).toEqual(ids(annSees));
    for (const bad of ['per_page=0', 'per_page=1001', 'page=x']) {
      const res = await ann.call('GET', `/projects/all?${bad}`);
      expect({ bad, status: res.status, type: res.headers.get('content-type') }).toEqual({
        bad,
        status: 400,
        type: expect.stringMatching(/^application\/problem\+json/),
      });
    }
  });

  it('is not taken for a project id, and /projects/{id} still works beside it', async () => {
    expect((await ann.call('GET', `/projects/${annSees[0].id}`)).body).toMatchObject({ id: annSees[0].id });
    expect((await ann.call('GET', '/projects/all/cards')).status).toBe(404);
    // The path takes GET only: a DELETE is refused by method (405, Allow without DELETE), not looked up as a project id.
    const deletion = await ann.call('DELETE', '/projects/all');
    expect({ status: deletion.status, allow: deletion.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD, OPTIONS' });
  });

  it('follows membership: a user who leaves a team no longer sees its projects', async () => {
    await ann.json('DELETE', `/organizations/${teamB}/members/${bob.id}`, undefined, 200);
    const his = await bobs.json<RawProject[]>('GET', '/projects/all', undefined, 200);
    expect(his.map((p) => p.title)).toEqual(['C1', 'C2']);
  });
});
