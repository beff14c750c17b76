import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, type ProjectJson } from '../../support/workspace-client.js';
import { importWorld, type ImportClient, type ImportedCardJson, type ImportWorld } from '../../support/import-client.js';
import { type Cell } from '../../support/spreadsheets.js';

type CardJson = ImportedCardJson;

// Imports into one project that match cards (update_field) run one at a
// time and check their rows again when the project changed under their check
// pass (docs/IMPORT.md, "Imports at once"). Before, identical imports sent
// at once all decided "create" and the project held each row's card once
// per import. The race shows on PostgreSQL only: on the embedded database
// a check pass's reads wait for the transaction running on its one
// connection, so it never saw the bug; the tests run there too, for the
// answers and the advisory lock (which PGlite has).
describe('spreadsheet imports sent at once into one project', () => {
  let t: TestApp, alice: TestUser, ws: ImportWorld['ws'], team: number, imports: ImportClient;
  beforeAll(async () => ({ t, alice, ws, team, imports } = await importWorld()));
  afterAll(() => t.close());

  const discover = (rows: Cell[][]) => imports.discover(rows);

  const importing = (body: Record<string, unknown>) => imports.importing(body);

  const rowCards = (project: ProjectJson) => imports.rowCards(project);

  async function projectWithEstimate(title: string): Promise<{ project: ProjectJson; body: Record<string, unknown> }> {
    const project = await ws.project(alice, team, title);
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name: 'Est', type: 'number' }).expect(201);
    const fileId = await discover([['Title', 'Est'], ['One', '1'], ['Two', '2']]);
    const body = {
      discover_file_id: fileId,
      project_id: project.id,
      options: { ignore_header: true },
      update_field: 'title',
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Est' } },
    };
    return { project, body };
  }

  const titles = (cards: CardJson[]) => cards.map((c) => c.title).sort();

  it('four identical update imports at once write each row card once; the later ones update it', async () => {
    for (let round = 0; round < 3; round++) {
      const { project, body } = await projectWithEstimate(`At once ${round}`);
      const answers = await Promise.all(Array.from({ length: 4 }, () => importing(body)));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const reports = answers.map((r) => r.body as { created: number; updated: number; skipped: number });
      // Each row's card is created by one import and updated by the others.
      expect(reports.reduce((n, r) => n + r.created, 0)).toBe(2);
      expect(reports.reduce((n, r) => n + r.updated, 0)).toBe(6);
      const cards = await rowCards(project);
      expect(titles(cards)).toEqual(['One', 'Two']);
      expect(Object.fromEntries(cards.map((c) => [c.title, c.attributes.Est]))).toEqual({ One: 1, Two: 2 });
      // The same import still singles out one card per row.
      const again = await importing(body).expect(200);
      expect(again.body).toMatchObject({ created: 0, updated: 2 });
    }
  });

  it('a second import sent after the first updates the cards the first created', async () => {
    const { project, body } = await projectWithEstimate('One after the other');
    expect((await importing(body).expect(200)).body).toMatchObject({ created: 2, updated: 0 });
    const second = await discover([['Title', 'Est'], ['One', '10'], ['Three', '3']]);
    expect((await importing({ ...body, discover_file_id: second }).expect(200)).body).toMatchObject({ created: 1, updated: 1 });
    const cards = await rowCards(project);
    expect(titles(cards)).toEqual(['One', 'Three', 'Two']);
    expect(Object.fromEntries(cards.map((c) => [c.title, c.attributes.Est]))).toEqual({ One: 10, Three: 3, Two: 2 });
  });

  it('imports without update_field sent at once each create their rows', async () => {
    const { project, body } = await projectWithEstimate('Creating at once');
    const { update_field: _ignored, ...creating } = body;
    const answers = await Promise.all(Array.from({ length: 3 }, () => importing(creating)));
    expect(answers.map((r) => [r.status, r.body.created])).toEqual([
      [200, 2],
      [200, 2],
      [200, 2],
    ]);
    expect(titles(await rowCards(project))).toEqual(['One', 'One', 'One', 'Two', 'Two', 'Two']);
  });

  it('imports sent at once that create the same field and context all use the one the first created', async () => {
    const project = await ws.project(alice, team, 'Creating a field at once');
    const fileId = await discover([['Title', 'Size', 'Tags'], ['One', '1', 'red'], ['Two', '2', 'blue']]);
    const body = {
      discover_file_id: fileId,
      project_id: project.id,
      options: { ignore_header: true },
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Size' }, '2': { type: 'context', name: 'Tags' } },
    };
    const answers = await Promise.all(Array.from({ length: 3 }, () => importing(body)));
    expect(answers.map((r) => [r.status, r.body.created])).toEqual([
      [200, 2],
      [200, 2],
      [200, 2],
    ]);
    const fields = (await t.http.get(`${API}/projects/${project.id}/attributes`).set(as(alice)).expect(200)).body as Array<{ name: string }>;
    expect(fields.map((f) => f.name).sort()).toEqual(['Size', 'Tags']);
    const cards = await rowCards(project);
    expect(cards.map((c) => c.attributes.Size).sort()).toEqual([1, 1, 1, 2, 2, 2]);
  });
});
