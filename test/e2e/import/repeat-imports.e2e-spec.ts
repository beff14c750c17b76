import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

const DISCOVER = `${API}/importers/spreadsheet/discover`;
const IMPORT = `${API}/importers/spreadsheet/import`;

interface CardJson {
  id: number;
  ref: number;
  title: string;
  parent_id: number;
  attributes: Record<string, unknown>;
}

/**
 * Imports with update_field, run again and again (DESIGN.md §8 presents a
 * repeated import as safe): keys repeated inside one file, empty cells of a
 * matched row, refs that match nothing.
 */
describe('import: matching rows to cards, again and again', () => {
  let t: TestApp;
  let alice: TestUser;
  let ws: ReturnType<typeof workspaceClient>;
  let team: number;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user();
    ws = workspaceClient(t);
    team = await ws.team(alice);
  });
  afterAll(() => t.close());

  const discover = async (csv: string): Promise<number> =>
    (await t.http.post(DISCOVER).set(as(alice)).attach('file', Buffer.from(csv), 'sheet.csv').expect(201)).body.file_id;
  const importing = (body: Record<string, unknown>) => t.http.post(IMPORT).set(as(alice)).send({ options: { ignore_header: true }, ...body });
  const all = async (project: ProjectJson): Promise<CardJson[]> =>
    (await t.http.get(`${API}/projects/${project.id}/cards?per_page=1000`).set(as(alice)).expect(200)).body;
  const rowCards = async (project: ProjectJson) => (await all(project)).filter((c) => c.parent_id === project.top_level_card_id);

  it('two rows of one key that matches no card: the later one is a row error naming the earlier, dry run alike, nothing written', async () => {
    const project = await ws.project(alice, team, 'Dupes');
    const file = await discover('Title,Est\nZed,1\nZed,2\nOther,3\n');
    const body = {
      discover_file_id: file,
      project_id: project.id,
      update_field: 'title',
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Est' } },
    };
    for (const dry_run of [true, false]) {
      const res = await importing({ ...body, dry_run });
      expect([res.status, res.body.errors]).toEqual([400, [{ row: 3, column: 0, message: 'matches the card row 2 creates' }]]);
    }
    expect(await rowCards(project)).toEqual([]);
    // By an attribute as well.
    const byEst = await discover('Title,Est\nA,7\nB,7\n');
    const res = await importing({ ...body, discover_file_id: byEst, update_field: 'Est' });
    expect([res.status, res.body.errors]).toEqual([400, [{ row: 3, column: 1, message: 'matches the card row 2 creates' }]]);
  });

  it('a row matched by ref with an empty title keeps the card title and updates the rest; one that would create is still refused', async () => {
    const project = await ws.project(alice, team, 'Keep');
    const mapping = { '0': { type: 'ref' }, '1': { type: 'title' }, '2': { type: 'attribute', attr_type: 'number', name: 'Est' } };
    const first = await discover('Ref,Title,Est\n,Alpha,1\n');
    await importing({ discover_file_id: first, project_id: project.id, mapping, update_field: 'ref' }).expect(200);
    const [alpha] = await rowCards(project);
    const file = await discover(`Ref,Title,Est\n#${alpha.ref},,12\n`);
    const counts = { project_id: project.id, created: 0, updated: 1, skipped: 0, children_created: 0 };
    expect((await importing({ discover_file_id: file, project_id: project.id, mapping, update_field: 'ref', dry_run: true }).expect(200)).body).toEqual(counts);
    expect((await importing({ discover_file_id: file, project_id: project.id, mapping, update_field: 'ref' }).expect(200)).body).toEqual(counts);
    expect((await rowCards(project)).map((c) => [c.title, c.attributes.Est])).toEqual([['Alpha', 12]]);
    // No ref and no title: nothing to create it with.
    const bare = await discover('Ref,Title,Est\n,,5\n');
    const res = await importing({ discover_file_id: bare, project_id: project.id, mapping, update_field: 'ref' });
    expect([res.status, res.body.errors]).toEqual([400, [{ row: 2, column: 1, message: 'the title is empty' }]]);
  });

  it('a ref that matches no card is a row error (a ref cannot be chosen); update_only skips it', async () => {
    const project = await ws.project(alice, team, 'Refs');
    const mapping = { '0': { type: 'ref' }, '1': { type: 'title' } };
    const file = await discover('Ref,Title\n#999,Ghost\n,New\n');
    for (const dry_run of [true, false]) {
      const res = await importing({ discover_file_id: file, project_id: project.id, mapping, update_field: 'ref', dry_run });
      expect([res.status, res.body.errors]).toEqual([
        400,
        [{ row: 2, column: 0, message: 'no card #999 in the project (a ref cannot be chosen; leave the cell empty to create a card)' }],
      ]);
    }
    expect(await rowCards(project)).toEqual([]);
    const skipped = await importing({ discover_file_id: file, project_id: project.id, mapping, update_field: 'ref', update_only: true }).expect(200);
    expect(skipped.body).toEqual({ project_id: project.id, created: 0, updated: 0, skipped: 2, children_created: 0 });
  });
});
