import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { EmbeddedUpkeep } from '../../../src/database/embedded-upkeep.js';
import { importClient } from '../../support/import-client.js';
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

  it('keeps planner statistics, for which PGlite has no autovacuum: analyzed at start, then after enough writes', async () => {
    const stats = t.app.get(EmbeddedUpkeep);
    // Only the calls below analyze: the check every 10 s could run during a slow import and leave nothing to see.
    stats.onModuleDestroy();
    const estimate = async () => Number(((await t.app.get(DataSource).query(`SELECT reltuples FROM pg_class WHERE oid = 'cards.cards'::regclass`)) as Array<{ reltuples: string }>)[0].reltuples);
    // Analyzed at start: an empty table is estimated 0 rows, never analyzed -1.
    expect(await estimate()).toBeGreaterThanOrEqual(0);
    const { body: org } = await t.http.post('/api/1.0/organizations').set(as(ann)).send({ name: 'Statistics' }).expect(201);
    const { body: project } = await t.http.post(`/api/1.0/organizations/${org.id}/projects`).set(as(ann)).send({ title: 'Many' }).expect(201);
    const importer = importClient(t, ann);
    const rows = Array.from({ length: 3000 }, (_, i) => [`Row ${i}`, i % 10]);
    const fileId = await importer.discover([['Title', 'Estimate'], ...rows]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' } };
    await importer.importing({ discover_file_id: fileId, project_id: project.id, mapping, options: { ignore_header: true } }).expect(200);
    expect(await estimate()).toBeLessThan(3000);
    expect(await stats.maintain()).toBe(true);
    expect(await estimate()).toBeGreaterThan(2500);
    // Nothing much written since: not again.
    expect(await stats.maintain()).toBe(false);
    // The filter that took 9 s on default estimates (one scan per card of every value above k).
    const filter = Array.from({ length: 25 }, (_, i) => `Estimate>${i % 5}`).join(' ');
    const found = await t.http.get(`/api/1.0/projects/${project.id}/cards`).query({ filter, only_ids: 'true', per_page: '1000' }).set(as(ann)).expect(200);
    expect(found.headers['x-service-total']).toBe('1500');
  }, 120_000);
});

