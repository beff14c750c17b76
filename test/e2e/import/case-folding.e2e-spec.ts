import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IMPORT, importWorld, type ImportClient, type ImportWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, type ProjectJson } from '../../support/workspace-client.js';
import { type Cell } from '../../support/spreadsheets.js';

interface CardJson {
  title: string;
  parent_id: number;
  attributes: Record<string, unknown>;
  groups: Array<{ title: string }>;
}

/**
 * Names and titles in another case, where PostgreSQL's lower() and
 * JavaScript's toLowerCase() disagree: 'İ' is 'i' to the database only, a
 * final 'Σ' is 'ς' to JavaScript only. A dry run and the import answer
 * alike, and name the existing field, context or group.
 */
describe('import: names in any case, folded as every module folds them', () => {
  let t: TestApp, alice: TestUser, ws: ImportWorld['ws'], team: number, imports: ImportClient;
  beforeAll(async () => ({ t, alice, ws, team, imports } = await importWorld()));
  afterAll(() => t.close());

  const post = (path: string, body: Record<string, unknown>) => t.http.post(`${API}${path}`).set(as(alice)).send(body).expect(201);
  const discover = (rows: Cell[][]) => imports.discover(rows);
  /** The same import as a dry run, then for real: both answers. */
  async function dryThenImport(body: Record<string, unknown>) {
    const dry = await t.http.post(IMPORT).set(as(alice)).send({ ...body, dry_run: true });
    const real = await t.http.post(IMPORT).set(as(alice)).send(body);
    return { dry: [dry.status, dry.body], real: [real.status, real.body] };
  }
  const rowCards = async (project: ProjectJson) =>
    ((await t.http.get(`${API}/projects/${project.id}/cards`).set(as(alice)).expect(200)).body as CardJson[]).filter((c) => c.parent_id === project.top_level_card_id);
  const names = async (path: string, key: 'name' | 'title') => ((await t.http.get(`${API}${path}`).set(as(alice)).expect(200)).body as Array<Record<string, string>>).map((x) => x[key]);

  it('fills the field the database holds under a name in another case: "İTEM" is "item"', async () => {
    const project = await ws.project(alice, team, 'Fields');
    await post(`/projects/${project.id}/attributes`, { name: 'item', type: 'text' });
    // The fields module holds them for the same name.
    expect((await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name: 'İTEM', type: 'text' }).expect(409)).body.type).toBe('FIELDS.NAME_TAKEN');
    const file = await discover([['Title', 'Item'], ['A', 'x']]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'İTEM' } };
    const counts = { project_id: project.id, created: 1, updated: 0, skipped: 0, children_created: 0 };
    expect(await dryThenImport({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping })).toEqual({ dry: [200, counts], real: [200, counts] });
    expect(await names(`/projects/${project.id}/attributes`, 'name')).toEqual(['item']);
    expect((await rowCards(project)).map((c) => c.attributes)).toEqual([{ item: 'x' }]);
  });

  it('fills the field of the exact name before another that only JavaScript folds to it: "οδος", not "ΟΔΟΣ"', async () => {
    const project = await ws.project(alice, team, 'Roads');
    await post(`/projects/${project.id}/attributes`, { name: 'ΟΔΟΣ', type: 'text' });
    await post(`/projects/${project.id}/attributes`, { name: 'οδος', type: 'number' });
    const file = await discover([['Title', 'Road'], ['A', '5']]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'οδος' } };
    const counts = { project_id: project.id, created: 1, updated: 0, skipped: 0, children_created: 0 };
    expect(await dryThenImport({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping })).toEqual({ dry: [200, counts], real: [200, counts] });
    expect((await rowCards(project)).map((c) => c.attributes)).toEqual([{ ΟΔΟΣ: null, οδος: 5 }]);
  });

  it('joins the existing group of a title in another case, and keeps a card in its one group', async () => {
    const project = await ws.project(alice, team, 'Groups');
    const root = project.top_level_card_id;
    const labels = (await post(`/projects/${project.id}/group-types`, { name: 'Labels' })).body;
    const status = (await post(`/projects/${project.id}/group-types`, { name: 'Status', one_group_per_card: true })).body;
    await post(`/cards/${root}/groups`, { type_id: labels.id, title: 'ΟΔΟΣ' });
    const istanbul = (await post(`/cards/${root}/groups`, { type_id: status.id, title: 'İstanbul' })).body;
    await post(`/cards/${root}/children`, { title: 'A', group_id: istanbul.id });
    // Each is refused as a second group of the same title: the grouping module holds them for the same.
    for (const title of ['οδος', 'istanbul']) {
      const type_id = title === 'οδος' ? labels.id : status.id;
      expect((await t.http.post(`${API}/cards/${root}/groups`).set(as(alice)).send({ type_id, title }).expect(409)).body.type).toBe('GROUPING.DUPLICATE_GROUP_TITLE');
    }
    const file = await discover([['Title', 'Labels', 'Status'], ['A', 'οδος', 'istanbul'], ['B', 'ΟΔΟΣ, οδος', 'İstanbul, istanbul']]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'context', name: 'labels' }, '2': { type: 'context', name: 'STATUS' } };
    const counts = { project_id: project.id, created: 1, updated: 1, skipped: 0, children_created: 0 };
    expect(await dryThenImport({ discover_file_id: file, project_id: project.id, update_field: 'title', options: { ignore_header: true }, mapping })).toEqual({
      dry: [200, counts],
      real: [200, counts],
    });
    expect(await names(`/group-types/${labels.id}/groups`, 'title')).toEqual(['ΟΔΟΣ']);
    expect(await names(`/group-types/${status.id}/groups`, 'title')).toEqual(['İstanbul']);
    expect((await rowCards(project)).map((c) => [c.title, c.groups.map((g) => g.title).sort()])).toEqual([
      ['A', ['İstanbul', 'ΟΔΟΣ']],
      ['B', ['İstanbul', 'ΟΔΟΣ']],
    ]);
  });

  it('joins the group lower() folds as the cell, before one only JavaScript folds to it: "ΟΔΟΣ" is "οδοσ", not "οδος"', async () => {
    const project = await ws.project(alice, team, 'Sigma');
    const root = project.top_level_card_id;
    const labels = (await post(`/projects/${project.id}/group-types`, { name: 'Labels' })).body;
    // Two titles every side keeps apart, the one JavaScript folds 'ΟΔΟΣ' to first.
    await post(`/cards/${root}/groups`, { type_id: labels.id, title: 'οδος' });
    await post(`/cards/${root}/groups`, { type_id: labels.id, title: 'οδοσ' });
    const file = await discover([['Title', 'Labels'], ['A', 'ΟΔΟΣ']]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'context', name: 'Labels' } };
    await t.http.post(IMPORT).set(as(alice)).send({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping }).expect(200);
    // As the filter and the importer's other name look-ups take it (fold-case.ts `findByName`).
    expect((await rowCards(project)).map((c) => [c.title, c.groups.map((g) => g.title)])).toEqual([['A', ['οδοσ']]]);
    expect(await names(`/group-types/${labels.id}/groups`, 'title')).toEqual(['οδος', 'οδοσ']);
  });

  it('takes a context named in another case for the existing type, one group per card included', async () => {
    const project = await ws.project(alice, team, 'Types');
    await post(`/projects/${project.id}/group-types`, { name: 'item', one_group_per_card: true });
    const file = await discover([['Title', 'Item'], ['A', 'x, y']]);
    const problems = [{ row: 2, column: 1, message: '"item" allows one group per card, and this cell names 2' }];
    const { dry, real } = await dryThenImport({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping: { '0': { type: 'title' }, '1': { type: 'context', name: 'İTEM' } } });
    expect([dry[0], (dry[1] as { errors: unknown }).errors]).toEqual([400, problems]);
    expect([real[0], (real[1] as { errors: unknown }).errors]).toEqual([400, problems]);
    expect(await rowCards(project)).toEqual([]);
    expect(await names(`/projects/${project.id}/group-types`, 'name')).toEqual(['item']);
  });

  it('takes update_field "Title" and " REF " as the keywords, as field names are taken in any case', async () => {
    const project = await ws.project(alice, team, 'Keywords');
    const counts = (created: number, updated: number) => ({ project_id: project.id, created, updated, skipped: 0, children_created: 0 });
    const made = await dryThenImport({ discover_file_id: await discover([['Title'], ['A'], ['B']]), project_id: project.id, options: { ignore_header: true }, mapping: { '0': { type: 'title' } } });
    expect(made).toEqual({ dry: [200, counts(2, 0)], real: [200, counts(2, 0)] });
    const byTitle = await discover([['Title', 'Size'], ['A', '3']]);
    const sized = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Size' } };
    expect(await dryThenImport({ discover_file_id: byTitle, project_id: project.id, update_field: 'Title', options: { ignore_header: true }, mapping: sized })).toEqual({
      dry: [200, counts(0, 1)],
      real: [200, counts(0, 1)],
    });
    const [a, b] = await rowCards(project);
    const bRef = ((await t.http.get(`${API}/projects/${project.id}/cards`).set(as(alice)).expect(200)).body as Array<{ title: string; ref: number }>).find((c) => c.title === 'B')!.ref;
    const byRef = await discover([['Ref', 'Title'], [`#${bRef}`, 'B renamed']]);
    expect(await dryThenImport({ discover_file_id: byRef, project_id: project.id, update_field: ' REF ', options: { ignore_header: true }, mapping: { '0': { type: 'ref' }, '1': { type: 'title' } } })).toEqual({
      dry: [200, counts(0, 1)],
      real: [200, counts(0, 1)],
    });
    expect((await rowCards(project)).map((c) => [c.title, c.attributes.Size])).toEqual([
      [a.title, 3],
      ['B renamed', b.attributes.Size],
    ]);
  });
});
