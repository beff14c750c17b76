import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

// Always on the embedded PGlite database, even when DATABASE_URL is set, so the
// default path of `npm start` stays tested.
describe('the embedded database path', () => {
  let t: TestApp;
  let ann: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ embedded: true });
    ann = await t.user();
  });
  afterAll(() => t.close());

  it('runs on PGlite', () => {
    expect(t.config.embedded).toBe(true);
  });

  it('serves the whole flow: team, project, cards, listing, stream', async () => {
    const { body: org } = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'Local' }).expect(201);
    const { body: project } = await t.http
      .post(`/api/1.0/organizations/${org.id}/projects`)
      .set(as(ann))
      .send({ title: 'Embedded' })
      .expect(201);
    const created = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        t.http.post(`/api/1.0/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: `c${i}` }).expect(201),
      ),
    );
    // Concurrent requests share the single PGlite connection one transaction at a time.
    expect(created.map((r) => r.body.ref).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(created.map((r) => r.body.position).sort()).toEqual([0, 1, 2, 3, 4]);
    const list = await t.http.get(`/api/1.0/projects/${project.id}/cards`).set(as(ann)).expect(200);
    expect(list.body).toHaveLength(5);
    expect(list.headers['x-service-total']).toBe('5');
    const stream = await t.http.get(`/api/1.0/cards/${created[0].body.id}/stream`).set(as(ann)).expect(200);
    expect(stream.body[0]).toMatchObject({ kind: 'activity', action: 'card.created' });
  });

  it('rolls back a failed request completely', async () => {
    const { body: org } = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'Rollback' }).expect(201);
    await t.http.post(`/api/1.0/organizations/${org.id}/members`).set(as(ann)).send({ user: '@ghost' }).expect(400);
    const members = await t.http.get(`/api/1.0/organizations/${org.id}/members`).set(as(ann)).expect(200);
    expect(members.body).toHaveLength(1);
  });
});
