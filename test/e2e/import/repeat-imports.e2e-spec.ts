import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { importWorld, type ImportClient, type ImportWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, type ProjectJson } from '../../support/workspace-client.js';

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
 * matched row, refs that match nothing, children and comments of matched
 * cards.
 */
describe('import: matching rows to cards, again and again', () => {
  let t: TestApp, alice: TestUser, ws: ImportWorld['ws'], team: number, imports: ImportClient;
  beforeAll(async () => ({ t, alice, ws, team, imports } = await importWorld()));
  afterAll(() => t.close());

  const discover = (csv: string) => imports.discoverCsv(csv);
  const importing = (body: Record<string, unknown>) => imports.importing({ options: { ignore_header: true }, ...body });
  const all = async (project: ProjectJson): Promise<CardJson[]> =>
    (await t.http.get(`${API}/projects/${project.id}/cards?per_page=1000`).set(as(alice)).expect(200)).body;
  const rowCards = async (project: ProjectJson) => (await all(project)).filter((c) => c.parent_id === project.top_level_card_id);
  const report = (project: ProjectJson, counts: { created: number; updated: number; children_created: number }) => ({
    project_id: project.id,
    skipped: 0,
    ...counts,
  });

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

  describe('a children column: a matched card gets only the children it lacks', () => {
    // Before, each run added every child again: a 300-row file imported four times left each child four times.
    const mapping = { '0': { type: 'title' }, '1': { type: 'children' } };
    const body = (file: number, project: ProjectJson) => ({ discover_file_id: file, project_id: project.id, mapping, update_field: 'title' });
    /** The race.csv of the audit: rows of a title and two children. */
    const race = (rows: number) => `Title,Children\n${Array.from({ length: rows }, (_, i) => `Runner ${i},"Lap ${i}\nFinish ${i}"`).join('\n')}\n`;

    /** The titles of each row card's children (archived ones too), by the row card's title; every page of the listing. */
    async function childrenByParent(project: ProjectJson): Promise<Map<string, string[]>> {
      const cards: CardJson[] = [];
      for (let page = 1; cards.length === (page - 1) * 1000; page++) {
        const url = `${API}/projects/${project.id}/cards?per_page=1000&page=${page}&with_archived=true`;
        cards.push(...((await t.http.get(url).set(as(alice)).expect(200)).body as CardJson[]));
      }
      const rows = new Map(cards.filter((c) => c.parent_id === project.top_level_card_id).map((c) => [c.id, c.title]));
      const children = new Map<string, string[]>();
      for (const c of cards) {
        const parent = rows.get(c.parent_id);
        if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), c.title]);
      }
      return children;
    }

    it('a 300-row file imported four times: each child once, the later runs report none, dry run alike', async () => {
      const project = await ws.project(alice, team, 'Race');
      const file = await discover(race(300));
      expect((await importing(body(file, project)).expect(200)).body).toEqual(report(project, { created: 300, updated: 0, children_created: 600 }));
      const again = report(project, { created: 0, updated: 300, children_created: 0 });
      expect((await importing({ ...body(file, project), dry_run: true }).expect(200)).body).toEqual(again);
      for (let run = 0; run < 3; run++) expect((await importing(body(file, project)).expect(200)).body).toEqual(again);
      const children = await childrenByParent(project);
      expect([children.size, [...children.values()].flat().length]).toEqual([300, 600]);
      expect(children.get('Runner 7')).toEqual(['Lap 7', 'Finish 7']);
    });

    it('four identical imports sent at once (one at a time under the import lock): each row card and each child once', async () => {
      const project = await ws.project(alice, team, 'Race at once');
      const file = await discover(race(40));
      const answers = await Promise.all(Array.from({ length: 4 }, () => importing(body(file, project))));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const sum = (key: string) => answers.reduce((n, r) => n + (r.body[key] as number), 0);
      expect([sum('created'), sum('updated'), sum('children_created')]).toEqual([40, 120, 80]);
      const children = await childrenByParent(project);
      expect([children.size, [...children.values()].flat().length]).toEqual([40, 80]);
    });

    it('only the titles a card lacks: exact text of the trimmed line, archived children count, other cards do not', async () => {
      const project = await ws.project(alice, team, 'Which children');
      const create = async (parent: number, title: string) =>
        (await t.http.post(`${API}/cards/${parent}/children`).set(as(alice)).send({ title }).expect(201)).body as CardJson;
      const one = await create(project.top_level_card_id, 'One');
      const two = await create(project.top_level_card_id, 'Two');
      await create(one.id, 'Kept');
      const shelved = await create(one.id, 'Shelved');
      await t.http.post(`${API}/cards/${shelved.id}/archive`).set(as(alice)).send({}).expect(200);
      await create(two.id, 'Elsewhere'); // another card's child: One still lacks it
      const file = await discover('Title,Children\nOne,"  Kept  \nShelved\nkept\nElsewhere\nNew\nNew"\nTwo,Elsewhere\n');
      // kept (another case), Elsewhere, and New twice (the cell names it twice, as a new card's cell would add it twice).
      const counts = report(project, { created: 0, updated: 2, children_created: 4 });
      expect((await importing({ ...body(file, project), dry_run: true }).expect(200)).body).toEqual(counts);
      expect((await importing(body(file, project)).expect(200)).body).toEqual(counts);
      const children = await childrenByParent(project);
      expect(children.get('One')).toEqual(['Kept', 'Shelved', 'kept', 'Elsewhere', 'New', 'New']);
      expect(children.get('Two')).toEqual(['Elsewhere']);
      expect((await importing(body(file, project)).expect(200)).body).toEqual(report(project, { created: 0, updated: 2, children_created: 0 }));
    });
  });

  describe('a comment column: a matched card gets only the comments it lacks', () => {
    // Before, each run added every comment again.
    const body = (file: number, project: ProjectJson, mapping: Record<string, unknown>) => ({
      discover_file_id: file,
      project_id: project.id,
      mapping,
      update_field: 'title',
    });
    const noteMapping = { '0': { type: 'title' }, '1': { type: 'comment' } };

    /** The comments on the project's cards, in the order written: [card title, author, content]. */
    async function comments(project: ProjectJson): Promise<Array<[string, number, string]>> {
      const rows = (await t.app.get(DataSource).query(
        `SELECT c.title, s.user_id::int AS user_id, s.content FROM cards.card_stream s JOIN cards.cards c ON c.id = s.card_id
          WHERE s.project_id = $1 AND s.kind = 'comment' ORDER BY s.id`,
        [project.id],
      )) as Array<{ title: string; user_id: number; content: string }>;
      return rows.map((r) => [r.title, r.user_id, r.content]);
    }

    /** The import's answer, and how many reads of comments it sent. */
    async function importCounting(request: Record<string, unknown>) {
      const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        const res = await importing(request).expect(200);
        return { body: res.body, commentReads: sent.mock.calls.filter(([text]) => /FROM cards\.card_stream[\s\S]*kind = 'comment'/.test(String(text))).length };
      } finally {
        sent.mockRestore();
      }
    }

    it('a 600-row file (two batches) imported again and again: each comment once, dry run alike; one read per batch of updates', async () => {
      const project = await ws.project(alice, team, 'Notes');
      const rows = Array.from({ length: 600 }, (_, i) => `Card ${i},Note ${i}`);
      const file = await discover(`Title,Note\n${rows.join('\n')}\n`);
      const mapping = noteMapping;
      const created = report(project, { created: 600, updated: 0, children_created: 0 });
      expect(await importCounting(body(file, project, mapping))).toEqual({ body: created, commentReads: 0 });
      const again = report(project, { created: 0, updated: 600, children_created: 0 });
      // The dry run reads none (no count depends on comments); each write batch of matched cards reads once.
      expect(await importCounting({ ...body(file, project, mapping), dry_run: true })).toEqual({ body: again, commentReads: 0 });
      for (let run = 0; run < 2; run++) expect(await importCounting(body(file, project, mapping))).toEqual({ body: again, commentReads: 2 });
      const written = await comments(project);
      expect(written).toHaveLength(600);
      expect(written[7]).toEqual(['Card 7', alice.id, 'Note 7']);
    });

    it('four identical imports sent at once (one at a time under the import lock): each comment once', async () => {
      const project = await ws.project(alice, team, 'Notes at once');
      const file = await discover(`Title,Note\n${Array.from({ length: 40 }, (_, i) => `Card ${i},Note ${i}`).join('\n')}\n`);
      const answers = await Promise.all(Array.from({ length: 4 }, () => importing(body(file, project, noteMapping))));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(await comments(project)).toHaveLength(40);
    });

    it('only the comments a card lacks: by the importing user, exact text of the trimmed cell; another user’s does not count', async () => {
      const project = await ws.project(alice, team, 'Which comments');
      const bob = await t.user();
      await ws.addMember(alice, team, bob);
      const card = async (title: string) =>
        (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(alice)).send({ title }).expect(201)).body as CardJson;
      const comment = async (user: TestUser, on: CardJson, content: string) =>
        t.http.post(`${API}/cards/${on.id}/comments`).set(as(user)).send({ content }).expect(201);
      const [one, two, three] = [await card('One'), await card('Two'), await card('Three')];
      await card('Four');
      await comment(alice, one, 'Call back'); // the trimmed cell's text: not added again
      await comment(bob, two, 'Call back'); // by another user: alice's is added
      await comment(alice, three, 'call back'); // another case, and the text with a space: added
      await comment(alice, three, ' Call back');
      // Four: both comment columns say the same missing text, which is added twice (as a children cell naming a missing title twice).
      const file = await discover('Title,Note,Also\nOne,  Call back  ,\nTwo,Call back,\nThree,Call back,\nFour,Same,Same\n');
      const mapping = { ...noteMapping, '2': { type: 'comment' } };
      const counts = report(project, { created: 0, updated: 4, children_created: 0 });
      const before = await comments(project);
      expect((await importing({ ...body(file, project, mapping), dry_run: true }).expect(200)).body).toEqual(counts);
      expect(await comments(project)).toEqual(before);
      expect((await importing(body(file, project, mapping)).expect(200)).body).toEqual(counts);
      const added: Array<[string, number, string]> = [
        ['Two', alice.id, 'Call back'],
        ['Three', alice.id, 'Call back'],
        ['Four', alice.id, 'Same'],
        ['Four', alice.id, 'Same'],
      ];
      expect(await comments(project)).toEqual([...before, ...added]);
      expect((await importing(body(file, project, mapping)).expect(200)).body).toEqual(counts);
      expect(await comments(project)).toEqual([...before, ...added]);
    });
  });
});
