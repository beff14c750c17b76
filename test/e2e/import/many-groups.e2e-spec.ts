import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { IMPORT, importWorld, type ImportClient } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { sheetFile } from '../../support/spreadsheets.js';
import { API, groupingClient, type GroupJson } from '../grouping/grouping-fixtures.js';

/**
 * A context column naming thousands of groups (DESIGN.md §8: "a hostile file
 * gets a 4xx within seconds"): the groups are found and created in bulk, a
 * fixed number of statements whatever their count, not one locked read of
 * every sibling per group (quadratic: 2 000 groups took 24 s).
 */
describe('import: a context column of many groups', () => {
  let t: TestApp, alice: TestUser, team: number, imports: ImportClient, c: ReturnType<typeof groupingClient>;
  beforeAll(async () => {
    ({ t, alice, team, imports } = await importWorld());
    c = groupingClient(t);
  });
  afterAll(() => t.close());

  const discover = (csv: string) => imports.discoverCsv(csv);
  const mapping = { '0': { type: 'title' }, '1': { type: 'context', name: 'L' } };

  it('creates 3 000 distinct groups in a few statements, at positions after the existing ones, reusing those of a title in any case', async () => {
    const project = await c.project(alice, team);
    const root = project.top_level_card_id;
    const labels = await c.type(alice, project.id, 'L');
    for (const title of ['Alpha', 'BETA']) await t.http.post(`${API}/cards/${root}/groups`).set(as(alice)).send({ type_id: labels.id, title }).expect(201);
    const fresh = Array.from({ length: 3000 }, (_, i) => `g${i}`);
    // Existing titles in another case, and a new one twice in two cases: one group each.
    const cells = ['alpha', ...fresh, 'beta', 'G7'];
    const file = await discover(`Title,L\nmany,"${cells.join(',')}"\n`);
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    let groupStatements: number;
    try {
      const res = await t.http.post(IMPORT).set(as(alice)).send({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping });
      expect([res.status, res.body]).toEqual([200, { project_id: project.id, created: 1, updated: 0, skipped: 0, children_created: 0 }]);
      groupStatements = sent.mock.calls.filter(([text]) => /grouping\.groups\b/.test(String(text))).length;
    } finally {
      sent.mockRestore();
    }
    // Per group it was about six.
    expect(groupStatements).toBeLessThan(20);
    const groups = (await t.http.get(`${API}/group-types/${labels.id}/groups`).set(as(alice)).expect(200)).body as GroupJson[];
    expect(groups.map((g) => [g.title, g.position])).toEqual(['Alpha', 'BETA', ...fresh].map((title, i) => [title, i]));
    const [card] = (await t.http.get(`${API}/projects/${project.id}/cards?per_page=10`).set(as(alice)).expect(200)).body.filter(
      (x: { parent_id: number }) => x.parent_id === root,
    );
    expect(card.groups.map((g: { title: string }) => g.title).sort()).toEqual(['Alpha', 'BETA', ...fresh].sort());
  }, 120_000);

  it('a dry run and the import of a new project agree on a column of many groups', async () => {
    const fresh = Array.from({ length: 500 }, (_, i) => `t${i}`);
    const file = await discover(`Title,L\nmany,"${fresh.join(',')}"\nmore,"t499,T0"\n`);
    const body = { discover_file_id: file, organization_id: team, title: 'New', options: { ignore_header: true }, mapping };
    const counts = { created: 2, updated: 0, skipped: 0, children_created: 0 };
    expect((await t.http.post(IMPORT).set(as(alice)).send({ ...body, dry_run: true }).expect(200)).body).toEqual({ project_id: null, ...counts });
    const real = (await t.http.post(IMPORT).set(as(alice)).send(body).expect(200)).body;
    expect(real).toEqual({ project_id: expect.any(Number), ...counts });
    const [type] = (await t.http.get(`${API}/projects/${real.project_id}/group-types`).set(as(alice)).expect(200)).body;
    const groups = (await t.http.get(`${API}/group-types/${type.id}/groups`).set(as(alice)).expect(200)).body as GroupJson[];
    expect(groups.map((g) => [g.title, g.position])).toEqual(fresh.map((title, i) => [title, i]));
  }, 60_000);

  it('a column naming more than 10 000 distinct groups: 400 naming its row and column at once, dry run alike, nothing written', async () => {
    const project = await c.project(alice, team);
    const first = Array.from({ length: 6000 }, (_, i) => `h${i}`);
    const second = Array.from({ length: 5001 }, (_, i) => `H${i + 5000}`); // 1 000 repeat the first row's in another case: 10 001 in all
    const file = await discover(`Title,L\none,"${first.join(',')}"\ntwo,"${second.join(',')}"\nthree,"x,y"\n`);
    const body = { discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping };
    for (const dry of [true, false]) {
      const started = Date.now();
      const res = await t.http.post(IMPORT).set(as(alice)).send({ ...body, dry_run: dry });
      expect([res.status, res.body.errors]).toEqual([
        400,
        [{ row: 3, column: 1, message: '"L": the column names more than 10000 distinct groups, the most an import takes for a context' }],
      ]);
      expect(Date.now() - started).toBeLessThan(20_000);
    }
    expect((await t.http.get(`${API}/projects/${project.id}/group-types`).set(as(alice)).expect(200)).body).toEqual([]);
  }, 60_000);
});
