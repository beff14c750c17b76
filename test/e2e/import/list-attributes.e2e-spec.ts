import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PreparingClient } from '../../../src/shared/persistence/prepared-statements.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, type ProjectJson, type StreamEntryJson } from '../../support/workspace-client.js';
import { importWorld, type ImportClient, type ImportedCardJson, type ImportWorld } from '../../support/import-client.js';
import { type Cell } from '../../support/spreadsheets.js';

/** The pool's statements go through PreparingClient on the server only (not on embedded PGlite). */
const onServer = Boolean(process.env.DATABASE_URL);

type CardJson = ImportedCardJson;

/** members, relationships and likes columns (DESIGN.md §8, docs/IMPORT.md). */
describe('import of members, relationships and likes columns', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  /** A user outside alice's team. */
  let carol: TestUser;
  let ws: ImportWorld['ws'];
  let team: number;
  let imports: ImportClient;

  beforeAll(async () => {
    ({ t, alice, ws, team, imports } = await importWorld());
    [bob, carol] = [await t.user(), await t.user()];
    await ws.addMember(alice, team, bob);
  });
  afterAll(() => t.close());

  const discover = (rows: Cell[][]) => imports.discover(rows);

  const importing = (body: Record<string, unknown>) => imports.importing(body);

  const card = async (id: number): Promise<CardJson> => (await t.http.get(`${API}/cards/${id}`).set(as(alice)).expect(200)).body;

  const rowCards = (project: ProjectJson) => imports.rowCards(project);

  const child = async (project: ProjectJson, title: string, attributes?: Record<string, unknown>): Promise<CardJson> =>
    (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(alice)).send({ title, attributes }).expect(201)).body;

  const field = (project: ProjectJson, name: string, type: string) =>
    t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name, type }).expect(201);

  async function stream(cardId: number): Promise<StreamEntryJson[]> {
    return (await t.http.get(`${API}/cards/${cardId}/stream`).set(as(alice)).expect(200)).body;
  }

  /** Everything a refused import must leave as it was. */
  async function snapshot(project: ProjectJson) {
    const cards = await rowCards(project);
    const fields = (await t.http.get(`${API}/projects/${project.id}/attributes`).set(as(alice)).expect(200)).body;
    return { cards: await Promise.all(cards.map((c) => card(c.id))), fields, streams: await Promise.all(cards.map((c) => stream(c.id))) };
  }

  const MAPPING = {
    '0': { type: 'title' },
    '1': { type: 'attribute', attr_type: 'members', name: 'Owners' },
    '2': { type: 'attribute', attr_type: 'relationships', name: 'Related' },
    '3': { type: 'attribute', attr_type: 'likes', name: 'Vote' },
  };

  it('creates the fields and sets users by @username or id, cards by ref (5 or #5), and the importer\'s vote', async () => {
    const project = await ws.project(alice, team, 'Lists');
    const [first, second] = [await child(project, 'First'), await child(project, 'Second')];
    const fileId = await discover([
      ['Title', 'Owners', 'Related', 'Vote'],
      ['One', `@${bob.username}, ${alice.id}`, `#${first.ref}\n${second.ref}`, '1'],
      ['Two', `@${bob.username.toUpperCase()}\n@${bob.username}`, `${second.ref}, #${second.ref}`, '-1'],
      ['Three', '', '', ''],
    ]);
    const res = await importing({ discover_file_id: fileId, project_id: project.id, mapping: MAPPING, options: { ignore_header: true } }).expect(200);
    expect(res.body).toEqual({ project_id: project.id, created: 3, updated: 0, skipped: 0, children_created: 0 });

    const fields = (await t.http.get(`${API}/projects/${project.id}/attributes`).set(as(alice)).expect(200)).body as Array<{ name: string; type: string }>;
    expect(fields.map((f) => [f.name, f.type])).toEqual([
      ['Owners', 'members'],
      ['Related', 'relationships'],
      ['Vote', 'likes'],
    ]);
    const [, , one, two, three] = await rowCards(project);
    expect((await card(one.id)).attributes).toEqual({
      Owners: [bob.id, alice.id],
      Related: [first.id, second.id],
      Vote: { score: 1, votes: { [alice.id]: 1 } },
    });
    expect((await card(two.id)).attributes).toEqual({ Owners: [bob.id], Related: [second.id], Vote: { score: -1, votes: { [alice.id]: -1 } } });
    expect((await card(three.id)).attributes).toEqual({ Owners: [], Related: [], Vote: { score: 0, votes: {} } });

    // The same entries as other attribute columns: logs, from the empty value.
    const changed = (await stream(one.id)).filter((e) => e.action === 'card.attribute_changed');
    expect(changed.map((e) => [e.kind, e.user_id, e.data.attribute, e.data.from, e.data.to]).sort()).toEqual(
      [
        ['log', alice.id, 'Owners', [], [bob.id, alice.id]],
        ['log', alice.id, 'Related', [], [first.id, second.id]],
        ['log', alice.id, 'Vote', { score: 0, votes: {} }, { score: 1, votes: { [alice.id]: 1 } }],
      ].sort(),
    );
  });

  it('an unknown user, a user outside the team, a malformed entry or an unknown ref: row problems, nothing written, dry_run too', async () => {
    const project = await ws.project(alice, team, 'Bad lists');
    const existing = await child(project, 'Existing');
    const fileId = await discover([
      ['Title', 'Owners', 'Related', 'Vote'],
      ['ok', `@${bob.username}`, `#${existing.ref}`, '1'],
      ['unknown user', '@nobody_here, @nobody_either', '', ''],
      ['outsider', `${alice.id}\n@${carol.username}`, '', ''],
      ['no at sign', bob.username, '', ''],
      ['unknown ref', '', `#${existing.ref}, #999`, ''],
      ['not a ref', '', 'Existing', ''],
      ['top-level card', '', '#0', ''],
      ['bad vote', '', '', '2'],
    ]);
    const before = await snapshot(project);
    const body = { discover_file_id: fileId, project_id: project.id, mapping: MAPPING, options: { ignore_header: true } };
    for (const dryRun of [false, true]) {
      const res = await importing({ ...body, dry_run: dryRun }).expect(400);
      expect(res.body.type).toBe('IMPORT.ROWS_INVALID');
      expect(res.body.errors).toEqual([
        { row: 3, column: 1, message: "Owners: user @nobody_here is not a member of this project's team (and 1 more in this cell)" },
        { row: 4, column: 1, message: `Owners: user @${carol.username} is not a member of this project's team` },
        { row: 5, column: 1, message: 'Owners: expected a user id or @username' },
        { row: 6, column: 2, message: 'Related: the project has no card #999 (a row can relate only to cards that exist before the import)' },
        { row: 7, column: 2, message: 'Related: "Existing" is not a card ref such as 5 or #5' },
        { row: 8, column: 2, message: 'Related: "#0" is not a card ref such as 5 or #5' },
        { row: 9, column: 3, message: 'Vote: expected a vote: -1, 0 or 1' },
      ]);
      expect(res.body.error_count).toBe(7);
    }
    expect(await snapshot(project)).toEqual(before);
    // Only the first row is good: a dry run of it reports, and writes nothing either.
    const good = await discover([['Title', 'Owners'], ['ok', `@${bob.username}`]]);
    const dry = await importing({ discover_file_id: good, project_id: project.id, mapping: { '0': MAPPING['0'], '1': MAPPING['1'] }, options: { ignore_header: true }, dry_run: true }).expect(200);
    expect(dry.body).toEqual({ project_id: project.id, created: 1, updated: 0, skipped: 0, children_created: 0 });
    expect(await snapshot(project)).toEqual(before);
  });

  it('a row with a bad cell elsewhere still has its members and relationships checked, and is matched: every problem listed and counted', async () => {
    const project = await ws.project(alice, team, 'Bad rows, bad lists');
    await child(project, 'Twin');
    await child(project, 'Twin');
    const fileId = await discover([
      ['Title', 'Est', 'Owners', 'Links'],
      ['A', 'x', '@nobody', '#999'],
      ['B', '', '@nobody', '#999'],
      ['', '', `@${carol.username}`, '#998'],
      ['Twin', 'y', '@nobody', ''],
    ]);
    const before = await snapshot(project);
    const mapping = {
      '0': { type: 'title' },
      '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
      '2': { type: 'attribute', attr_type: 'members', name: 'Owners' },
      '3': { type: 'attribute', attr_type: 'relationships', name: 'Links' },
    };
    const body = { discover_file_id: fileId, project_id: project.id, mapping, options: { ignore_header: true }, update_field: 'title' };
    for (const dryRun of [true, false]) {
      const res = await importing({ ...body, dry_run: dryRun }).expect(400);
      const noCard = (ref: number) => `Links: the project has no card #${ref} (a row can relate only to cards that exist before the import)`;
      expect(res.body.errors.map((e: { row: number; column: number; message: string }) => [e.row, e.column, e.message])).toEqual([
        [2, 1, 'Estimate: expected a number'],
        [2, 2, "Owners: user @nobody is not a member of this project's team"],
        [2, 3, noCard(999)],
        [3, 2, "Owners: user @nobody is not a member of this project's team"],
        [3, 3, noCard(999)],
        [4, 0, 'the title is empty'],
        [4, 2, `Owners: user @${carol.username} is not a member of this project's team`],
        [4, 3, noCard(998)],
        [5, 0, 'matches 2 cards; update_field must single out one card'],
        [5, 1, 'Estimate: expected a number'],
        [5, 2, "Owners: user @nobody is not a member of this project's team"],
      ]);
      expect(res.body.error_count).toBe(11);
    }
    expect(await snapshot(project)).toEqual(before);
  });

  it('into a new project: members of the chosen team; no card exists to relate to', async () => {
    const fileId = await discover([['Title', 'Owners', 'Related'], ['A', `@${bob.username}`, ''], ['B', '', '#1']]);
    const body = { discover_file_id: fileId, title: 'Fresh', organization_id: team, mapping: { '0': MAPPING['0'], '1': MAPPING['1'], '2': MAPPING['2'] }, options: { ignore_header: true } };
    const refused = await importing(body).expect(400);
    expect(refused.body.errors).toEqual([{ row: 3, column: 2, message: expect.stringMatching(/^Related: the project has no card #1 /) }]);
    const res = await importing({ ...body, mapping: { '0': MAPPING['0'], '1': MAPPING['1'] } }).expect(200);
    const project = (await t.http.get(`${API}/projects/${res.body.project_id}`).set(as(alice)).expect(200)).body as ProjectJson;
    const [a] = await rowCards(project);
    expect((await card(a.id)).attributes).toEqual({ Owners: [bob.id] });
  });

  it('rows cannot relate to cards the same import creates', async () => {
    const project = await ws.project(alice, team, 'Same import');
    await child(project, 'Existing'); // ref 1
    // The rows would become #2 and #3.
    const fileId = await discover([['Title', 'Related'], ['A', '#3'], ['B', '#1']]);
    const res = await importing({ discover_file_id: fileId, project_id: project.id, mapping: { '0': MAPPING['0'], '1': MAPPING['2'] }, options: { ignore_header: true } }).expect(400);
    expect(res.body.errors).toEqual([{ row: 2, column: 1, message: expect.stringMatching(/^Related: the project has no card #3 /) }]);
  });

  it('an update replaces the lists and the vote of the cells given, keeps those of empty cells, and records what changed only', async () => {
    const project = await ws.project(alice, team, 'Update lists');
    await field(project, 'Owners', 'members');
    await field(project, 'Related', 'relationships');
    await field(project, 'Vote', 'likes');
    const target = await child(project, 'Target');
    const a = await child(project, 'A', { Owners: [alice.id], Related: [target.id] });
    const b = await child(project, 'B', { Owners: [alice.id, bob.id], Related: [target.id] });
    await t.http.post(`${API}/cards/${b.id}/attributes/Vote`).set(as(bob)).send({ value: 1 }).expect(200);

    const fileId = await discover([
      ['Title', 'Owners', 'Related', 'Vote'],
      ['A', `@${bob.username}`, '', '1'],
      ['B', `${alice.id}, ${bob.id}`, `#${target.ref}, #${a.ref}`, '-1'],
    ]);
    const res = await importing({ discover_file_id: fileId, project_id: project.id, mapping: MAPPING, update_field: 'title', options: { ignore_header: true } }).expect(200);
    expect(res.body).toMatchObject({ created: 0, updated: 2 });
    expect((await card(a.id)).attributes).toEqual({ Owners: [bob.id], Related: [target.id], Vote: { score: 1, votes: { [alice.id]: 1 } } });
    expect((await card(b.id)).attributes).toEqual({
      Owners: [alice.id, bob.id],
      Related: [target.id, a.id],
      Vote: { score: 0, votes: { [alice.id]: -1, [bob.id]: 1 } },
    });
    const changes = async (id: number) =>
      (await stream(id))
        .filter((e) => e.action === 'card.attribute_changed' && e.kind === 'log')
        .map((e) => [e.data.attribute, e.data.from, e.data.to])
        .sort();
    expect(await changes(a.id)).toEqual(
      [
        ['Owners', [alice.id], [bob.id]],
        ['Vote', { score: 0, votes: {} }, { score: 1, votes: { [alice.id]: 1 } }],
      ].sort(),
    );
    // B's owners did not change: no entry.
    expect(await changes(b.id)).toEqual(
      [
        ['Related', [target.id], [target.id, a.id]],
        ['Vote', { score: 1, votes: { [bob.id]: 1 } }, { score: 0, votes: { [alice.id]: -1, [bob.id]: 1 } }],
      ].sort(),
    );

    // A card related to itself is a row problem.
    const self = await discover([['Title', 'Related'], ['A', `#${a.ref}`]]);
    const refused = await importing({ discover_file_id: self, project_id: project.id, mapping: { '0': MAPPING['0'], '1': MAPPING['2'] }, update_field: 'title', options: { ignore_header: true } }).expect(400);
    expect(refused.body.errors).toEqual([{ row: 2, column: 1, message: `Related: #${a.ref} is the card this row updates, and a card cannot be related to itself` }]);
  });

  it('an existing field of another type, a files column, or matching on a list: 400 naming the mapping', async () => {
    const project = await ws.project(alice, team, 'Mapping');
    await field(project, 'Owners', 'text');
    const fileId = await discover([['Title', 'Owners'], ['a', `@${bob.username}`]]);
    const refused = async (body: Record<string, unknown>) => (await importing({ discover_file_id: fileId, project_id: project.id, ...body }).expect(400)).body.errors;
    expect(await refused({ mapping: { '0': MAPPING['0'], '1': MAPPING['1'] } })).toEqual([
      { field: 'mapping.1.attr_type', message: '"Owners" exists with type text, not members' },
    ]);
    expect(await refused({ mapping: { '0': MAPPING['0'], '1': { type: 'attribute', attr_type: 'files', name: 'Spec' } } })).toEqual([
      { field: 'mapping.1.attr_type', message: expect.stringMatching(/^files cannot be filled from a spreadsheet/) },
    ]);
    expect(await refused({ mapping: { '0': MAPPING['0'], '1': { type: 'attribute', attr_type: 'members', name: 'People' } }, update_field: 'People' })).toEqual([
      { field: 'update_field', message: expect.stringMatching(/^cards cannot be matched on a members attribute/) },
    ]);
    const fields = (await t.http.get(`${API}/projects/${project.id}/attributes`).set(as(alice)).expect(200)).body as unknown[];
    expect(fields).toHaveLength(1);
  });

  it('a batch naming 70 000 distinct user ids is a 400 listing row problems, not a 500 (more than a statement can bind one by one)', async () => {
    const project = await ws.project(alice, team, 'Crowd');
    const rows: Cell[][] = [['Title', 'Owners']];
    for (let r = 0; r < 500; r++) rows.push([`Row ${r}`, Array.from({ length: 140 }, (_, i) => String(1_000_000 + r * 140 + i)).join(', ')]);
    const fileId = await discover(rows);
    const res = await importing({ discover_file_id: fileId, project_id: project.id, mapping: { '0': MAPPING['0'], '1': MAPPING['1'] }, options: { ignore_header: true } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toEqual({ row: 2, column: 1, message: expect.stringContaining('user 1000000 is not a member') });
    expect(await rowCards(project)).toEqual([]);
  });

  it('a cell naming thousands of users is one row problem, and the lookups stay one per batch', async () => {
    const project = await ws.project(alice, team, 'Many');
    const crowd = Array.from({ length: 3000 }, (_, i) => `@someone_${i}`).join(', ');
    const hostile = await discover([['Title', 'Owners'], ['crowd', crowd]]);
    const res = await importing({ discover_file_id: hostile, project_id: project.id, mapping: { '0': MAPPING['0'], '1': MAPPING['1'] }, options: { ignore_header: true } }).expect(400);
    expect(res.body.errors).toEqual([{ row: 2, column: 1, message: 'Owners: expected at most 1000 values' }]);

    // 1 200 rows (three batches of 500), each naming users and cards: the
    // users and the refs are looked up once per batch in each pass, whatever the rows.
    const targets = [await child(project, 'T1'), await child(project, 'T2')];
    const rows: Cell[][] = [['Title', 'Owners', 'Related']];
    for (let i = 0; i < 1200; i++) rows.push([`Row ${i}`, i % 2 ? `@${bob.username}, ${alice.id}` : `@${alice.username}`, `#${targets[i % 2].ref}`]);
    const fileId = await discover(rows);
    const statements: string[] = [];
    const proto = PreparingClient.prototype as unknown as { query: (this: unknown, ...args: unknown[]) => unknown };
    const original = proto.query;
    proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : String((config as { text?: unknown })?.text ?? '');
      statements.push(text);
      return original.call(this, config, ...rest);
    };
    let answer: Record<string, unknown>;
    try {
      answer = (await importing({ discover_file_id: fileId, project_id: project.id, mapping: { '0': MAPPING['0'], '1': MAPPING['1'], '2': MAPPING['2'] }, options: { ignore_header: true } }).expect(200)).body;
    } finally {
      proto.query = original;
    }
    expect(answer).toMatchObject({ created: 1200 });
    const created = await rowCards(project); // the first 1 000
    expect((await card(created[3].id)).attributes).toEqual({ Owners: [bob.id, alice.id], Related: [targets[1].id] });
    if (onServer) {
      const count = (pattern: RegExp) => statements.filter((s) => pattern.test(s)).length;
      // Usernames: one lookup per batch in the check pass, one in the write
      // pass (the fields module checks again as it writes), and the API key's.
      expect(count(/"identity"\."users"|identity\.users/)).toBeLessThanOrEqual(7);
      // Memberships: the same, and the access checks of the request.
      expect(count(/memberships/i)).toBeLessThanOrEqual(12);
      expect(count(/ref = ANY/)).toBeLessThanOrEqual(3);
      expect(count(/INSERT INTO fields\.member_values/)).toBeLessThanOrEqual(3);
      expect(count(/INSERT INTO fields\.relationship_values/)).toBeLessThanOrEqual(3);
      // A statement per row would be 1 200 at least.
      expect(statements.length).toBeLessThan(80);
    }
  });
});
