import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

describe('teams, members and projects', () => {
  let t: TestApp;
  let ann: TestUser;
  let bob: TestUser;
  let eve: TestUser;
  let orgId: number;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user('ann');
    bob = await t.user('bob');
    eve = await t.user('eve');
    const res = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'Acme' }).expect(201);
    orgId = res.body.id;
  });
  afterAll(() => t.close());

  it('creates a team whose creator is admin', async () => {
    const res = await t.http.get(`/api/1.0/organizations/${orgId}`).set(as(ann)).expect(200);
    expect(res.body).toEqual({ id: orgId, name: 'Acme', role: 'admin', created_at: expect.any(String) });
    const members = await t.http.get(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).expect(200);
    expect(members.body).toEqual([{ user_id: ann.id, username: 'ann', role: 'admin' }]);
  });

  it('lists the caller’s teams only, paginated', async () => {
    for (let i = 0; i < 3; i++) await t.http.post('/api/1.0/organizations').set(as(eve)).send({ name: `E${i}` }).expect(201);
    const page1 = await t.http.get('/api/1.0/organizations?per_page=2').set(as(eve)).expect(200);
    expect(page1.body.map((o: { name: string }) => o.name)).toEqual(['E0', 'E1']);
    expect(page1.headers['x-service-page']).toBe('1');
    expect(page1.headers['x-service-nextpage']).toBe('2');
    expect(page1.headers['x-service-total']).toBe('3');
    expect(page1.headers['x-service-totalpages']).toBe('2');
    const page2 = await t.http.get('/api/1.0/organizations?per_page=2&page=2').set(as(eve)).expect(200);
    expect(page2.body.map((o: { name: string }) => o.name)).toEqual(['E2']);
    expect(page2.headers['x-service-nextpage']).toBeUndefined();
    const anns = await t.http.get('/api/1.0/organizations').set(as(ann)).expect(200);
    expect(anns.body.map((o: { id: number }) => o.id)).toEqual([orgId]);
    await t.http.get('/api/1.0/organizations?per_page=1001').set(as(eve)).expect(400);
    await t.http.get('/api/1.0/organizations?page=0').set(as(eve)).expect(400);
    // The largest page the message names is a page (empty), one more is not.
    const last = await t.http.get('/api/1.0/organizations?page=1000000000').set(as(eve)).expect(200);
    expect(last.body).toEqual([]);
    const past = await t.http.get('/api/1.0/organizations?page=1000000001').set(as(eve)).expect(400);
    expect(past.body.errors).toEqual([{ field: 'page', message: 'must be an integer from 1 to 1000000000' }]);
  });

  it('hides a team from outsiders with 404', async () => {
    await t.http.get(`/api/1.0/organizations/${orgId}`).set(as(eve)).expect(404);
    await t.http.get(`/api/1.0/organizations/${orgId}/members`).set(as(eve)).expect(404);
    await t.http.get(`/api/1.0/organizations/${orgId}/projects`).set(as(eve)).expect(404);
    await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(eve)).send({ title: 'x' }).expect(404);
    await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(eve)).send({ user: eve.id }).expect(404);
    await t.http.get('/api/1.0/organizations/999999').set(as(ann)).expect(404);
  });

  it('adds members by @username or id, and refuses bad ones', async () => {
    const added = await t.http
      .post(`/api/1.0/organizations/${orgId}/members`)
      .set(as(ann))
      .send({ user: '@bob', role: 'viewer' })
      .expect(201);
    expect(added.body).toEqual({ user_id: bob.id, username: 'bob', role: 'viewer' });
    await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).send({ user: bob.id }).expect(409);
    const unknown = await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).send({ user: '@nobody' }).expect(400);
    expect(unknown.body.errors[0].field).toBe('user');
    await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).send({ user: 'bob' }).expect(400);
    await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).send({ user: eve.id, role: 'owner' }).expect(400);
    const members = await t.http.get(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).expect(200);
    expect(members.body.map((m: { username: string }) => m.username).sort()).toEqual(['ann', 'bob']);
  });

  it('refuses a user that is not an id or @username like any other id (400 naming user), and documents the id as one', async () => {
    for (const user of [0, -1, -bob.id, 1.5, 2 ** 53, '0', '-1', `0${bob.id}`, `${bob.id}.0`, true, null, [bob.id], {}]) {
      const res = await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(ann)).send({ user });
      expect({ user, status: res.status, type: res.headers['content-type'], errors: res.body.errors }).toEqual({
        user,
        status: 400,
        type: expect.stringMatching(/^application\/problem\+json/),
        errors: [{ field: 'user', message: 'must be a user id or @username' }],
      });
    }
    const doc = (await t.http.get('/api/1.0/spec.json').expect(200)).body;
    const user = doc.components.schemas.AddMemberDto.properties.user;
    expect(user.oneOf[0]).toEqual({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
  });

  it('lets a viewer read but not write (403)', async () => {
    await t.http.get(`/api/1.0/organizations/${orgId}`).set(as(bob)).expect(200);
    await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(bob)).send({ title: 'nope' }).expect(403);
    await t.http.post(`/api/1.0/organizations/${orgId}/members`).set(as(bob)).send({ user: eve.id }).expect(403);
    const projects = await t.http.get(`/api/1.0/organizations/${orgId}/projects`).set(as(bob)).expect(200);
    expect(projects.body.find((p: { title: string }) => p.title === 'nope')).toBeUndefined();
  });

  it('creates projects with their top-level card, readable by members only', async () => {
    const res = await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).send({ title: 'Roadmap' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      organization_id: orgId,
      title: 'Roadmap',
      top_level_card_id: expect.any(Number),
      created_at: expect.any(String),
    });
    const project = res.body;
    const top = await t.http.get(`/api/1.0/cards/${project.top_level_card_id}`).set(as(bob)).expect(200);
    expect(top.body).toMatchObject({ ref: 0, depth: 0, parent_id: null, project_id: project.id });
    await t.http.get(`/api/1.0/projects/${project.id}`).set(as(bob)).expect(200, project);
    await t.http.get(`/api/1.0/projects/${project.id}`).set(as(eve)).expect(404);
    const list = await t.http.get(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).expect(200);
    expect(list.body).toContainEqual(project);
    expect(list.headers['x-service-total']).toBe(String(list.body.length));
  });

  it('refuses bad project input and changes nothing', async () => {
    const before = await t.http.get(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).expect(200);
    await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).send({}).expect(400);
    await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).send({ title: ['x'] }).expect(400);
    await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).send({ title: 'x', top_level_card_id: 1 }).expect(400);
    const after = await t.http.get(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).expect(200);
    expect(after.body).toEqual(before.body);
  });

  it('deletes a project (admins only) with its cards', async () => {
    const { body: project } = await t.http.post(`/api/1.0/organizations/${orgId}/projects`).set(as(ann)).send({ title: 'Temp' }).expect(201);
    const { body: card } = await t.http
      .post(`/api/1.0/cards/${project.top_level_card_id}/children`)
      .set(as(ann))
      .send({ title: 'c' })
      .expect(201);
    await t.http.delete(`/api/1.0/projects/${project.id}`).set(as(bob)).expect(403);
    await t.http.delete(`/api/1.0/projects/${project.id}`).set(as(eve)).expect(404);
    await t.http.delete(`/api/1.0/projects/${project.id}`).set(as(ann)).expect(200);
    await t.http.get(`/api/1.0/projects/${project.id}`).set(as(ann)).expect(404);
    await t.http.get(`/api/1.0/cards/${card.id}`).set(as(ann)).expect(404);
    await t.http.get(`/api/1.0/cards/${project.top_level_card_id}`).set(as(ann)).expect(404);
  });

  it('changes a member’s role (admins only) and never demotes the last admin', async () => {
    const team = (await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'Roles' }).expect(201)).body.id as number;
    const members = `/api/1.0/organizations/${team}/members`;
    await t.http.post(members).set(as(ann)).send({ user: `@${bob.username}`, role: 'viewer' }).expect(201);
    const roles = async () => ((await t.http.get(members).set(as(ann)).expect(200)).body as Array<{ user_id: number; role: string }>).map((m) => [m.user_id, m.role]);

    // Ann, the only admin, cannot demote herself; bob (a viewer) cannot change roles.
    const last = await t.http.put(`${members}/${ann.id}`).set(as(ann)).send({ role: 'member' }).expect(409);
    expect(last.body).toMatchObject({ status: 409, type: 'WORKSPACE.LAST_ADMIN' });
    await t.http.put(`${members}/${bob.id}`).set(as(bob)).send({ role: 'admin' }).expect(403);
    expect(await roles()).toEqual([[ann.id, 'admin'], [bob.id, 'viewer']]);

    const promoted = await t.http.put(`${members}/${bob.id}`).set(as(ann)).send({ role: 'admin' }).expect(200);
    expect(promoted.body).toEqual({ user_id: bob.id, username: bob.username, role: 'admin' });
    // Two admins demoting each other at once: one wins, the team keeps an admin.
    const both = await Promise.all([
      t.http.put(`${members}/${bob.id}`).set(as(ann)).send({ role: 'member' }),
      t.http.put(`${members}/${ann.id}`).set(as(bob)).send({ role: 'member' }),
    ]);
    // The loser is refused as the last admin (409) or, when it came second, as no longer an admin (403).
    const statuses = both.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    expect((await roles()).filter(([, role]) => role === 'admin')).toHaveLength(1);

    const admin = (await roles()).find(([, role]) => role === 'admin')![0] as number;
    const other = admin === ann.id ? bob : ann;
    const asAdmin = admin === ann.id ? ann : bob;
    for (const body of [{}, { role: 'owner' }, { role: 'viewer', extra: 1 }]) {
      const refused = await t.http.put(`${members}/${other.id}`).set(as(asAdmin)).send(body).expect(400);
      expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    await t.http.put(`${members}/${eve.id}`).set(as(asAdmin)).send({ role: 'viewer' }).expect(404);
    await t.http.put(`${members}/${other.id}`).set(as(eve)).send({ role: 'admin' }).expect(404);
    await t.http.put(`${members}/${other.id}`).set(as(asAdmin)).send({ role: 'viewer' }).expect(200);
    expect((await roles()).find(([id]) => id === other.id)).toEqual([other.id, 'viewer']);
  });

  it('removes members but keeps the last admin', async () => {
    await t.http.delete(`/api/1.0/organizations/${orgId}/members/${ann.id}`).set(as(ann)).expect(409);
    await t.http.delete(`/api/1.0/organizations/${orgId}/members/${ann.id}`).set(as(bob)).expect(403);
    await t.http.delete(`/api/1.0/organizations/${orgId}/members/${eve.id}`).set(as(ann)).expect(404);
    await t.http.delete(`/api/1.0/organizations/${orgId}/members/${bob.id}`).set(as(ann)).expect(200);
    await t.http.get(`/api/1.0/organizations/${orgId}`).set(as(bob)).expect(404);
  });
});
