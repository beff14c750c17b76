import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type QueryRunner } from 'typeorm';
import { DISCOVER, IMPORT, importWorld, type ImportWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, type ProjectJson, type StreamEntryJson } from '../../support/workspace-client.js';
import { sheetFile, type Cell, type SheetFormat } from '../../support/spreadsheets.js';

interface CardJson {
  id: number;
  ref: number;
  title: string;
  parent_id: number;
  model_id: number | null;
  attributes: Record<string, unknown>;
  groups: Array<{ id: number; type_id: number; title: string }>;
}

describe('POST /importers/spreadsheet/import', () => {
  let t: TestApp, alice: TestUser, ws: ImportWorld['ws'], team: number;
  beforeAll(async () => ({ t, alice, ws, team } = await importWorld()));
  afterAll(() => t.close());

  async function discover(rows: Cell[][], format: SheetFormat, user = alice): Promise<number> {
    const res = await t.http.post(DISCOVER).set(as(user)).attach('file', sheetFile(rows, format), `sheet.${format}`).expect(201);
    expect(res.body.format).toBe(format);
    return res.body.file_id;
  }

  const importing = (body: Record<string, unknown>, user = alice) => t.http.post(IMPORT).set(as(user)).send(body);

  async function cards(projectId: number): Promise<CardJson[]> {
    return (await t.http.get(`${API}/projects/${projectId}/cards?per_page=1000`).set(as(alice)).expect(200)).body;
  }

  const rowCards = (all: CardJson[], project: ProjectJson) => all.filter((c) => c.parent_id === project.top_level_card_id);

  async function stream(cardId: number): Promise<StreamEntryJson[]> {
    return (await t.http.get(`${API}/cards/${cardId}/stream`).set(as(alice)).expect(200)).body;
  }

  /** Everything a failed import must leave unchanged. */
  async function snapshot(project: ProjectJson) {
    const [list, fields, types, rootStream] = await Promise.all([
      cards(project.id),
      t.http.get(`${API}/projects/${project.id}/attributes`).set(as(alice)).expect(200),
      t.http.get(`${API}/projects/${project.id}/group-types`).set(as(alice)).expect(200),
      stream(project.top_level_card_id),
    ]);
    return { list, fields: fields.body, types: types.body, rootStream };
  }

  it('imports every mapping type from an XLSX file', async () => {
    const project = await ws.project(alice, team, 'Every type');
    const model = (await t.http.post(`${API}/projects/${project.id}/models`).set(as(alice)).send({ name: 'Bug' }).expect(201)).body;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name: 'Estimate', type: 'number' }).expect(201);
    const fileId = await discover(
      [
        ['Title', 'Estimate', 'Notes', 'Labels', 'Kind', 'Comment', 'Subtasks', 'Ref', 'Due', 'Ignored'],
        ['Write docs', 3, 'long text', 'docs, writing\nurgent', 'Bug', 'first pass', 'outline\ndraft', '#99', '2026-02-01', 'x'],
        ['Fix bug', 5, '', 'bug', '', '', '', '', '', ''],
      ],
      'xlsx',
    );
    const res = await importing({
      discover_file_id: fileId,
      project_id: project.id,
      options: { ignore_header: true },
      mapping: {
        '0': { type: 'title' },
        '1': { type: 'attribute', attr_type: 'number', name: 'estimate' },
        '2': { type: 'attribute', attr_type: 'content', name: 'Notes' },
        '3': { type: 'context', name: 'Labels' },
        '4': { type: 'model' },
        '5': { type: 'comment' },
        '6': { type: 'children' },
        '7': { type: 'ref' },
        '8': { type: 'attribute', attr_type: 'date', name: 'Due' },
      },
    }).expect(200);
    expect(res.body).toEqual({ project_id: project.id, created: 2, updated: 0, skipped: 0, children_created: 2 });

    const all = await cards(project.id);
    const [docs, bug] = rowCards(all, project);
    expect(docs).toMatchObject({
      title: 'Write docs',
      model_id: model.id,
      attributes: { Estimate: 3, Notes: 'long text', Due: '2026-02-01' },
    });
    expect(docs.groups.map((g) => g.title).sort()).toEqual(['docs', 'urgent', 'writing']);
    expect(bug).toMatchObject({ title: 'Fix bug', model_id: null, attributes: { Estimate: 5, Notes: null, Due: null } });
    expect(bug.groups.map((g) => g.title)).toEqual(['bug']);
    expect(docs.ref).not.toBe(99); // ref is read only
    const children = (await t.http.get(`${API}/cards/${docs.id}/children`).set(as(alice)).expect(200)).body as CardJson[];
    expect(children.map((c) => c.title)).toEqual(['outline', 'draft']);

    const types = (await t.http.get(`${API}/projects/${project.id}/group-types`).set(as(alice)).expect(200)).body;
    expect(types).toEqual([expect.objectContaining({ name: 'Labels', one_group_per_card: false })]);
    const groups = (await t.http.get(`${API}/group-types/${types[0].id}/groups`).set(as(alice)).expect(200)).body;
    expect(groups.every((g: { card_id: number }) => g.card_id === project.top_level_card_id)).toBe(true);

    const entries = await stream(docs.id);
    expect(entries).toContainEqual(expect.objectContaining({ kind: 'comment', content: 'first pass', user_id: alice.id }));
    // As one card's creation records them (newest first): the comment last, after the model.
    expect(entries.map((e) => e.action).filter((a) => a !== 'card.group_changed')).toEqual([
      'comment.added',
      'card.model_changed',
      'card.attribute_changed',
      'card.attribute_changed',
      'card.attribute_changed',
      'card.created',
    ]);
    expect(entries).toContainEqual(expect.objectContaining({ kind: 'log', action: 'card.created' }));
    expect(entries.filter((e) => e.kind === 'activity' && e.action === 'card.created')).toEqual([]);
    const root = await stream(project.top_level_card_id);
    expect(root).toContainEqual(
      expect.objectContaining({ kind: 'log', action: 'import.completed', data: expect.objectContaining({ created: 2, children_created: 2 }) }),
    );
  });

  it('puts imported cards last in their groups, in row order, with a group_changed entry each', async () => {
    const project = await ws.project(alice, team, 'Columns');
    const root = project.top_level_card_id;
    const type = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(alice)).send({ name: 'Labels' }).expect(201)).body;
    const docs = (await t.http.post(`${API}/cards/${root}/groups`).set(as(alice)).send({ type_id: type.id, title: 'docs' }).expect(201)).body;
    const first = (await t.http.post(`${API}/cards/${root}/children`).set(as(alice)).send({ title: 'Already there', group_id: docs.id }).expect(201)).body;
    const fileId = await discover([['Title', 'Labels'], ['one', 'docs'], ['two', 'new, DOCS'], ['three', 'docs\nnew\ndocs']], 'csv');
    await importing({
      discover_file_id: fileId,
      project_id: project.id,
      options: { ignore_header: true },
      mapping: { '0': { type: 'title' }, '1': { type: 'context', name: 'labels' } },
    }).expect(200);
    const placed = (card: CardJson) => card.groups.map((g) => [g.title, (g as { card_position?: number }).card_position]);
    const byTitle = new Map(rowCards(await cards(project.id), project).map((c) => [c.title, c]));
    expect(placed(byTitle.get('Already there')!)).toEqual([['docs', 0]]);
    expect(placed(byTitle.get('one')!)).toEqual([['docs', 1]]);
    expect(placed(byTitle.get('two')!).sort()).toEqual([['docs', 2], ['new', 0]]);
    expect(placed(byTitle.get('three')!).sort()).toEqual([['docs', 3], ['new', 1]]);
    expect(first.id).toBe(byTitle.get('Already there')!.id);
    const changes = (await stream(byTitle.get('three')!.id)).filter((e) => e.action === 'card.group_changed');
    expect(changes.map((e) => [e.kind, e.data.change, e.data.group_title, e.data.position]).sort()).toEqual([
      ['log', 'added', 'docs', 3],
      ['log', 'added', 'new', 1],
    ]);
  });

  it('without ignore_header imports the header row as a card', async () => {
    const project = await ws.project(alice, team, 'Header');
    const fileId = await discover([['Title'], ['One']], 'csv');
    const res = await importing({ discover_file_id: fileId, project_id: project.id, mapping: { '0': { type: 'title' } } }).expect(200);
    expect(res.body.created).toBe(2);
    expect(rowCards(await cards(project.id), project).map((c) => c.title)).toEqual(['Title', 'One']);
  });

  it('updates by title (CSV), by ref (ODS) and by an attribute (XLSX); update_only skips the rest', async () => {
    const project = await ws.project(alice, team, 'Updates');
    const first = await discover([['Title', 'Key', 'Size'], ['Alpha', 'a-1', 1], ['Beta', 'b-2', 2]], 'xlsx');
    const mapping = {
      '0': { type: 'title' },
      '1': { type: 'attribute', attr_type: 'text', name: 'Key' },
      '2': { type: 'attribute', attr_type: 'number', name: 'Size' },
    };
    await importing({ discover_file_id: first, project_id: project.id, mapping, options: { ignore_header: true } }).expect(200);
    const [alpha, beta] = rowCards(await cards(project.id), project);

    const byTitle = await discover([['Title', 'Size'], ['Alpha', 10], ['Gamma', 3]], 'csv');
    const res1 = await importing({
      discover_file_id: byTitle,
      project_id: project.id,
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Size' } },
      update_field: 'title',
      options: { ignore_header: true },
    }).expect(200);
    expect(res1.body).toMatchObject({ created: 1, updated: 1, skipped: 0 });

    const byRef = await discover([['Ref', 'Title'], [`#${beta.ref}`, 'Beta renamed'], ['9999', 'Nobody']], 'ods');
    const res2 = await importing({
      discover_file_id: byRef,
      project_id: project.id,
      mapping: { '0': { type: 'ref' }, '1': { type: 'title' } },
      update_field: 'ref',
      update_only: true,
      options: { ignore_header: true },
    }).expect(200);
    expect(res2.body).toMatchObject({ created: 0, updated: 1, skipped: 1 });

    const byKey = await discover([['Key', 'Title', 'Size'], ['a-1', 'Alpha by key', 7]], 'xlsx');
    const res3 = await importing({
      discover_file_id: byKey,
      project_id: project.id,
      mapping: { '0': { type: 'attribute', attr_type: 'text', name: 'key' }, '1': { type: 'title' }, '2': { type: 'attribute', attr_type: 'number', name: 'Size' } },
      update_field: 'Key',
      options: { ignore_header: true },
    }).expect(200);
    expect(res3.body).toMatchObject({ created: 0, updated: 1 });

    const after = rowCards(await cards(project.id), project);
    expect(after.map((c) => [c.id, c.title, c.attributes.Size])).toEqual([
      [alpha.id, 'Alpha by key', 7],
      [beta.id, 'Beta renamed', 2],
      [expect.any(Number), 'Gamma', 3],
    ]);
    const logs = (await stream(beta.id)).filter((e) => e.action === 'card.updated');
    expect(logs).toEqual([expect.objectContaining({ kind: 'log', data: { title: { from: 'Beta', to: 'Beta renamed' } } })]);
  });

  it('an update writes every mapping type in bulk, with log entries for what changed only', async () => {
    const project = await ws.project(alice, team, 'Bulk updates');
    const model = (await t.http.post(`${API}/projects/${project.id}/models`).set(as(alice)).send({ name: 'Bug' }).expect(201)).body;
    const mapping = {
      '0': { type: 'title' },
      '1': { type: 'attribute', attr_type: 'number', name: 'Size' },
      '2': { type: 'attribute', attr_type: 'text', name: 'Notes' },
    };
    const first = await discover([['Title', 'Size', 'Notes'], ['One', 1, 'keep'], ['Two', 2, 'keep']], 'csv');
    await importing({ discover_file_id: first, project_id: project.id, mapping, options: { ignore_header: true } }).expect(200);
    const [one, two] = rowCards(await cards(project.id), project);

    const second = await discover(
      [
        ['Title', 'Size', 'Notes', 'Labels', 'Model', 'Comment', 'Children'],
        ['One', 10, 'keep', 'red, blue', 'Bug', 'looked at', 'a\nb'],
        ['Two', 2, 'changed', 'red', '', '', ''],
      ],
      'csv',
    );
    const res = await importing({
      discover_file_id: second,
      project_id: project.id,
      mapping: {
        ...mapping,
        '3': { type: 'context', name: 'Labels' },
        '4': { type: 'model' },
        '5': { type: 'comment' },
        '6': { type: 'children' },
      },
      update_field: 'title',
      options: { ignore_header: true },
    }).expect(200);
    expect(res.body).toMatchObject({ created: 0, updated: 2, children_created: 2 });

    const after = rowCards(await cards(project.id), project);
    expect(after.map((c) => [c.id, c.attributes.Size, c.attributes.Notes, c.groups.map((g) => g.title).sort(), c.model_id])).toEqual([
      [one.id, 10, 'keep', ['blue', 'red'], model.id],
      [two.id, 2, 'changed', ['red'], null],
    ]);
    const children = (await t.http.get(`${API}/cards/${one.id}/children`).set(as(alice)).expect(200)).body as CardJson[];
    expect(children.map((c) => c.title)).toEqual(['a', 'b']);

    const oneStream = await stream(one.id);
    expect(oneStream.filter((e) => e.kind === 'activity')).toEqual([]);
    // Newest first: the update's change, then the creation's value.
    expect(oneStream.filter((e) => e.action === 'card.attribute_changed' && e.data.attribute === 'Size')).toEqual([
      expect.objectContaining({ kind: 'log', data: expect.objectContaining({ from: 1, to: 10 }) }),
      expect.objectContaining({ kind: 'log', data: expect.objectContaining({ from: null, to: 1 }) }),
    ]);
    // An unchanged value records nothing: "keep" was set once, by the first import.
    expect(oneStream.filter((e) => e.action === 'card.attribute_changed' && e.data.attribute === 'Notes')).toHaveLength(1);
    expect(oneStream).toContainEqual(expect.objectContaining({ kind: 'log', action: 'card.model_changed' }));
    expect(oneStream.filter((e) => e.action === 'card.group_changed')).toEqual([
      expect.objectContaining({ kind: 'log' }),
      expect.objectContaining({ kind: 'log' }),
    ]);
    expect(oneStream).toContainEqual(expect.objectContaining({ kind: 'comment', content: 'looked at' }));
    const twoStream = await stream(two.id);
    expect(twoStream.filter((e) => e.action === 'card.attribute_changed' && e.data.attribute === 'Notes')[0]).toMatchObject({
      kind: 'log',
      data: { from: 'keep', to: 'changed' },
    });
    expect(twoStream.filter((e) => e.action === 'card.updated')).toEqual([]); // the title did not change
  });

  it('a matched row that changes nothing leaves its card untouched (updated_at, stream); one that changes a value or the title marks it', async () => {
    const project = await ws.project(alice, team, 'Unchanged updates');
    const mapping = {
      '0': { type: 'title' },
      '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
      '2': { type: 'attribute', attr_type: 'text', name: 'Key' },
      '3': { type: 'attribute', attr_type: 'members', name: 'Owners' },
    };
    const me = `@${alice.username}`;
    const first = await discover(
      [['Title', 'Est', 'Key', 'Owners'], ['Same', 8, 'k1', me], ['Blank', 3, 'k2', ''], ['Changed', 1, 'k3', ''], ['Old title', 1, 'k4', ''], ['Owned', 5, 'k5', '']],
      'csv',
    );
    await importing({ discover_file_id: first, project_id: project.id, mapping, options: { ignore_header: true } }).expect(200);
    const before = rowCards(await cards(project.id), project) as Array<CardJson & { updated_at: string }>;
    const streams = await Promise.all(before.map((c) => stream(c.id)));
    await new Promise((resolve) => setTimeout(resolve, 20));

    const byTitle = await discover(
      [['Title', 'Est', 'Key', 'Owners'], ['Same', 8, 'k1', me], ['Blank', '', '', ''], ['Changed', 2, 'k3', ''], ['New one', 1, '', ''], ['Owned', 5, 'k5', me]],
      'csv',
    );
    const res = await importing({ discover_file_id: byTitle, project_id: project.id, mapping, update_field: 'title', options: { ignore_header: true } }).expect(200);
    // A matched row counts as updated, whether or not it changes its card.
    expect(res.body).toMatchObject({ created: 1, updated: 4 });
    const byKey = await discover([['Title', 'Est', 'Key', 'Owners'], ['New title', '', 'k4', '']], 'csv');
    await importing({ discover_file_id: byKey, project_id: project.id, mapping, update_field: 'Key', options: { ignore_header: true } }).expect(200);

    const after = rowCards(await cards(project.id), project) as Array<CardJson & { updated_at: string }>;
    const [same, blank, changed, renamed, owned] = before.map((card) => after.find((c) => c.id === card.id)!);
    expect([same, blank].map((c) => [c.title, c.attributes, c.updated_at])).toEqual(before.slice(0, 2).map((c) => [c.title, c.attributes, c.updated_at]));
    expect(await Promise.all([same, blank].map((c) => stream(c.id)))).toEqual(streams.slice(0, 2));
    expect(changed.attributes.Estimate).toBe(2);
    expect(renamed.title).toBe('New title');
    expect(owned.attributes.Owners).toEqual([alice.id]);
    for (const [card, old] of [[changed, before[2]], [renamed, before[3]], [owned, before[4]]] as const) {
      expect(Date.parse(card.updated_at)).toBeGreaterThan(Date.parse(old.updated_at));
    }
  });

  it('an update puts matched cards last in the groups they join and leaves their memberships; a second group of a one-group type is a row problem', async () => {
    const project = await ws.project(alice, team, 'Update groups');
    const root = project.top_level_card_id;
    const group = async (typeId: number, title: string) => (await t.http.post(`${API}/cards/${root}/groups`).set(as(alice)).send({ type_id: typeId, title }).expect(201)).body;
    const labels = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(alice)).send({ name: 'Labels' }).expect(201)).body;
    const status = (await t.http.post(`${API}/projects/${project.id}/group-types`).set(as(alice)).send({ name: 'Status', one_group_per_card: true }).expect(201)).body;
    const docs = await group(labels.id, 'docs');
    const doing = await group(status.id, 'Doing');
    await group(status.id, 'Done');
    const a = (await t.http.post(`${API}/cards/${root}/children`).set(as(alice)).send({ title: 'A', group_id: docs.id }).expect(201)).body;
    await t.http.post(`${API}/cards/${a.id}/add-to-group`).set(as(alice)).send({ group_id: doing.id }).expect(200);
    const b = (await t.http.post(`${API}/cards/${root}/children`).set(as(alice)).send({ title: 'B' }).expect(201)).body;
    const byTitle = async () => new Map(rowCards(await cards(project.id), project).map((c) => [c.title, c]));
    const placed = (card: CardJson) => card.groups.map((g) => [g.title, (g as { card_position?: number }).card_position]).sort();

    const labelled = await discover([['Title', 'Labels'], ['A', 'docs, new'], ['B', 'docs\nDOCS']], 'csv');
    const update = (fileId: number, name: string) =>
      importing({ discover_file_id: fileId, project_id: project.id, update_field: 'title', options: { ignore_header: true }, mapping: { '0': { type: 'title' }, '1': { type: 'context', name } } });
    await update(labelled, 'Labels').expect(200);
    let now = await byTitle();
    expect(placed(now.get('A')!)).toEqual([['Doing', 0], ['docs', 0], ['new', 0]]);
    expect(placed(now.get('B')!)).toEqual([['docs', 1]]);
    const joined = (await stream(b.id)).filter((e) => e.action === 'card.group_changed');
    expect(joined.map((e) => [e.kind, e.data.change, e.data.group_title, e.data.position])).toEqual([['log', 'added', 'docs', 1]]);

    // A already holds "Doing" of the one-group Status; C is new but names two of its groups.
    const before = await snapshot(project);
    const moved = await discover([['Title', 'Status'], ['B', 'Doing'], ['A', 'Done'], ['C', 'Doing, Done'], ['A', 'doing']], 'csv');
    const problems = [
      { row: 3, column: 1, message: 'the card is in "Doing" of "Status", which allows one group per card; move it with relocate' },
      { row: 4, column: 1, message: '"Status" allows one group per card, and this cell names 2' },
      { row: 5, column: 0, message: 'matches the same card as row 3' },
    ];
    const dry = await importing({ discover_file_id: moved, project_id: project.id, update_field: 'title', dry_run: true, options: { ignore_header: true }, mapping: { '0': { type: 'title' }, '1': { type: 'context', name: 'Status' } } }).expect(400);
    expect(dry.body.errors).toEqual(problems);
    const refused = await update(moved, 'Status').expect(400);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(refused.body.errors).toEqual(problems);
    const after = await snapshot(project);
    expect(after.list).toEqual(before.list);
    expect(after.rootStream).toEqual(before.rootStream);
    now = await byTitle();
    expect(placed(now.get('B')!)).toEqual([['docs', 1]]);

    // Naming the group a card is already in (any case) is no move: it stays where it is.
    const kept = await discover([['Title', 'Status'], ['A', 'DOING'], ['B', 'Done']], 'csv');
    await update(kept, 'Status').expect(200);
    now = await byTitle();
    expect(placed(now.get('A')!)).toEqual([['Doing', 0], ['docs', 0], ['new', 0]]);
    expect(placed(now.get('B')!)).toEqual([['Done', 0], ['docs', 1]]);
  });

  it('refuses a row that matches several cards', async () => {
    const project = await ws.project(alice, team, 'Twins');
    const twins = await discover([['Same'], ['Same']], 'csv');
    await importing({ discover_file_id: twins, project_id: project.id, mapping: { '0': { type: 'title' } } }).expect(200);
    const again = await discover([['Same']], 'csv');
    const res = await importing({ discover_file_id: again, project_id: project.id, mapping: { '0': { type: 'title' } }, update_field: 'title' }).expect(400);
    expect(res.body.errors).toEqual([{ row: 1, column: 0, message: 'matches 2 cards; update_field must single out one card' }]);
  });

  it('creates a new project from title and organization_id', async () => {
    const fileId = await discover([['Title', 'Points'], ['A', 1], ['B', 2]], 'ods');
    const res = await importing({
      discover_file_id: fileId,
      title: 'Imported project',
      organization_id: team,
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Points' } },
      options: { ignore_header: true },
    }).expect(200);
    expect(res.body).toEqual({ project_id: expect.any(Number), created: 2, updated: 0, skipped: 0, children_created: 0 });
    const project = (await t.http.get(`${API}/projects/${res.body.project_id}`).set(as(alice)).expect(200)).body as ProjectJson;
    expect(project).toMatchObject({ title: 'Imported project', organization_id: team });
    expect(rowCards(await cards(project.id), project).map((c) => [c.title, c.attributes.Points])).toEqual([
      ['A', 1],
      ['B', 2],
    ]);
  });

  it('dry_run reports without writing', async () => {
    const project = await ws.project(alice, team, 'Dry');
    const before = await snapshot(project);
    const fileId = await discover([['Title', 'Tag'], ['A', 'x'], ['', ''], ['B', 'y']], 'xlsx');
    const res = await importing({
      discover_file_id: fileId,
      project_id: project.id,
      mapping: { '0': { type: 'title' }, '1': { type: 'context', name: 'Tags' } },
      options: { ignore_header: true },
      dry_run: true,
    }).expect(200);
    expect(res.body).toEqual({ project_id: project.id, created: 2, updated: 0, skipped: 1, children_created: 0 });
    expect(await snapshot(project)).toEqual(before);
  });

  it('a bad row: 400 listing every problem by row and column, and nothing written', async () => {
    const project = await ws.project(alice, team, 'Bad rows');
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name: 'Estimate', type: 'number' }).expect(201);
    const before = await snapshot(project);
    const fileId = await discover(
      [['Title', 'Estimate', 'Due', 'Kind', 'New field'], ['ok', 1, '2026-01-01', '', 'x'], ['', 2], ['bad', 'lots', 'soon', 'Epic']],
      'csv',
    );
    const res = await importing({
      discover_file_id: fileId,
      project_id: project.id,
      options: { ignore_header: true },
      mapping: {
        '0': { type: 'title' },
        '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
        '2': { type: 'attribute', attr_type: 'date', name: 'Due' },
        '3': { type: 'model' },
        '4': { type: 'attribute', attr_type: 'text', name: 'New field' },
      },
    }).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.type).toBe('IMPORT.ROWS_INVALID');
    expect(res.body.error_count).toBe(4);
    expect(res.body.errors).toEqual([
      { row: 3, column: 0, message: 'the title is empty' },
      { row: 4, column: 1, message: expect.stringMatching(/^Estimate: /) },
      { row: 4, column: 2, message: expect.stringMatching(/^Due: /) },
      { row: 4, column: 3, message: 'the project has no model named "Epic"' },
    ]);
    expect(await snapshot(project)).toEqual(before);
  });

  it('a cell no text can hold (NUL, an unpaired surrogate) or a context with a control character: 400 naming its row and column, nothing written', async () => {
    const project = await ws.project(alice, team, 'Unsafe cells');
    const before = await snapshot(project);
    const rows = [
      ['Title', 'Comment', 'Subtasks', 'Labels'],
      ['ok', 'fine', 'child', 'label'],
      ['nul\u0000title', '', '', ''],
      // `_xD800_` is how XLSX writes U+D800; SheetJS reads it back unpaired.
      ['fine', 'lone _xD800_ surrogate', 'kid\u0000', 'tab\there'],
    ];
    const upload = await t.http
      .post(DISCOVER)
      .set(as(alice))
      .attach('file', sheetFile(rows, 'xlsx', { sharedStrings: true }), 'sheet.xlsx')
      .expect(201);
    // discover shows such characters as U+FFFD
    expect(upload.body.fields.map((f: { samples: string[] }) => f.samples)).toEqual([
      ['ok', 'nul\uFFFDtitle', 'fine'],
      ['fine', 'lone \uFFFD surrogate'],
      ['child', 'kid\uFFFD'],
      ['label', 'tab\there'],
    ]);
    const res = await importing({
      discover_file_id: upload.body.file_id,
      project_id: project.id,
      options: { ignore_header: true },
      mapping: { '0': { type: 'title' }, '1': { type: 'comment' }, '2': { type: 'children' }, '3': { type: 'context', name: 'Labels' } },
    }).expect(400);
    expect(res.body.type).toBe('IMPORT.ROWS_INVALID');
    const unsafe = 'must not contain NUL characters or unpaired surrogates';
    expect(res.body.errors).toEqual([
      { row: 3, column: 0, message: unsafe },
      { row: 4, column: 1, message: unsafe },
      { row: 4, column: 2, message: unsafe },
      { row: 4, column: 3, message: '"tab\there": must not contain control characters' },
    ]);
    expect(await snapshot(project)).toEqual(before);
  });

  it('a CSV with stray control bytes: read as text, a cell no text can hold is a row problem, others follow the API rules', async () => {
    // Before, the whole file was a 415 "binary content that is not a spreadsheet", with no row or column.
    const project = await ws.project(alice, team, 'Stray bytes');
    const before = await snapshot(project);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'Notes' }, '2': { type: 'children' }, '3': { type: 'context', name: 'Labels' } };
    const filler = Array.from({ length: 100 }, (_, i) => `Row ${i},note,,\r`).join('');
    const bad = Buffer.from(`Title,Notes,Subtasks,Labels\r${filler}nul\x00title,,,\rfine,,,esc\x1blabel\r`, 'latin1');
    const badId = (await t.http.post(DISCOVER).set(as(alice)).attach('file', bad, 'export.csv').expect(201)).body.file_id;
    const res = await importing({ discover_file_id: badId, project_id: project.id, options: { ignore_header: true }, mapping }).expect(400);
    expect(res.body.errors).toEqual([
      { row: 102, column: 0, message: 'must not contain NUL characters or unpaired surrogates' },
      { row: 103, column: 3, message: '"esc\x1blabel": must not contain control characters' },
    ]);
    expect(await snapshot(project)).toEqual(before);
    // FileMaker's in-cell line break (a vertical tab) splits children as a line break does; a title or a text keeps
    // an escape or a vertical tab, as one sent through the API does.
    const good = Buffer.from('Title,Notes,Subtasks,Labels\rShip\x1b[1m,first\x0bsecond,outline\x0bdraft,red\x0bblue\r', 'latin1');
    const goodId = (await t.http.post(DISCOVER).set(as(alice)).attach('file', good, 'export.csv').expect(201)).body.file_id;
    const ok = await importing({ discover_file_id: goodId, project_id: project.id, options: { ignore_header: true }, mapping }).expect(200);
    expect(ok.body).toMatchObject({ created: 1, children_created: 2 });
    const [ship] = rowCards(await cards(project.id), project);
    expect([ship.title, ship.attributes.Notes]).toEqual(['Ship\x1b[1m', 'first\x0bsecond']);
    const children = (await t.http.get(`${API}/cards/${ship.id}/children`).set(as(alice)).expect(200)).body as CardJson[];
    expect(children.map((c) => c.title)).toEqual(['outline', 'draft']);
    const labels = (await t.http.get(`${API}/cards/${ship.id}`).set(as(alice)).expect(200)).body.groups as Array<{ title: string }>;
    expect(labels.map((g) => g.title).sort()).toEqual(['blue', 'red']);
  });

  it('an existing field of another type is a 400 naming the mapping key', async () => {
    const project = await ws.project(alice, team, 'Types');
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name: 'Estimate', type: 'number' }).expect(201);
    const fileId = await discover([['T', 'E'], ['a', 'b']], 'csv');
    const res = await importing({
      discover_file_id: fileId,
      project_id: project.id,
      mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'Estimate' } },
    }).expect(400);
    expect(res.body.errors).toEqual([{ field: 'mapping.1.attr_type', message: '"Estimate" exists with type number, not text' }]);
  });

  it("another team's project_id or organization_id: 400 naming it, nothing written", async () => {
    const mallory = await t.user();
    const theirs = await ws.project(mallory, await ws.team(mallory), 'Not yours');
    const before = await (async () => {
      const list = await t.http.get(`${API}/projects/${theirs.id}/cards`).set(as(mallory)).expect(200);
      return list.body;
    })();
    const fileId = await discover([['Title'], ['Intruder']], 'csv');
    const res = await importing({ discover_file_id: fileId, project_id: theirs.id, mapping: { '0': { type: 'title' } } }).expect(400);
    expect(res.body.errors).toEqual([{ field: 'project_id', message: 'no such project visible to you' }]);
    expect((await t.http.get(`${API}/projects/${theirs.id}/cards`).set(as(mallory)).expect(200)).body).toEqual(before);
    // a new project in their team neither
    const newThere = await importing({ discover_file_id: fileId, title: 'Planted', organization_id: theirs.organization_id, mapping: { '0': { type: 'title' } } }).expect(400);
    expect(newThere.body.errors).toEqual([{ field: 'organization_id', message: 'no such team visible to you' }]);
    const theirProjects = await t.http.get(`${API}/organizations/${theirs.organization_id}/projects`).set(as(mallory)).expect(200);
    expect(theirProjects.body.map((p: ProjectJson) => p.title)).toEqual(['Not yours']);
    // …and an upload of someone else is not yours to import
    const own = await ws.project(mallory, (await t.http.get(`${API}/organizations`).set(as(mallory))).body[0].id, 'Own');
    const stolen = await importing({ discover_file_id: fileId, project_id: own.id, mapping: { '0': { type: 'title' } } }, mallory).expect(400);
    expect(stolen.body.errors[0].field).toBe('discover_file_id');
  });

  // A second connection (the holder) takes a row first and stands for a
  // DELETE that got there before the import, or holds the import back while a
  // DELETE comes. The embedded database runs one transaction at a time.
  describe('while a deletion races it', () => {
    const onServer = Boolean(process.env.DATABASE_URL);
    const estimateMapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' } };

    /** A project with a number field "Estimate" and an uploaded sheet of two rows filling it. */
    async function estimateProject(title: string) {
      const project = await ws.project(alice, team, title);
      const estimate = (await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(alice)).send({ name: 'Estimate', type: 'number' }).expect(201)).body;
      const fileId = await discover([['Title', 'Estimate'], ['a', 1], ['b', 2]], 'csv');
      return { project, estimate, fileId };
    }

    /** Runs `body` with the holder's transaction open; it is rolled back unless `body` committed it. */
    async function holding(body: (holder: QueryRunner, db: DataSource) => Promise<void>): Promise<void> {
      const db = t.app.get(DataSource);
      const holder = db.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        await body(holder, db);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
    }

    // It answered 400 naming the field's internal id.
    it('a field deleted first: the import waits, answers 409 naming the mapping key, and writes nothing', async () => {
      if (!onServer) return;
      const { project, estimate, fileId } = await estimateProject('Field deleted');
      const before = await snapshot(project);
      await holding(async (holder, db) => {
        await holder.query(`SELECT id FROM fields.attributes WHERE id = $1 FOR UPDATE`, [estimate.id]);
        const pending = importing({ discover_file_id: fileId, project_id: project.id, options: { ignore_header: true }, mapping: estimateMapping }).then((r) => r);
        await untilSomeoneWaitsForALock(db);
        await holder.query(`DELETE FROM fields.attributes WHERE id = $1`, [estimate.id]);
        await holder.commitTransaction();
        const res = await pending;
        expect(res.status).toBe(409);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.body.detail).toBe('mapping.1.name: the field "Estimate" was deleted while the import ran; nothing was imported');
      });
      const after = await snapshot(project);
      expect(after.list).toEqual(before.list);
      expect(after.rootStream).toEqual(before.rootStream);
      expect(after.fields).toEqual([]);
    });

    // It wrote the cards into the deleted project.
    it('a project deleted first: the import waits, answers 400 naming project_id, and writes no card', async () => {
      if (!onServer) return;
      const project = await ws.project(alice, team, 'Project deleted');
      const fileId = await discover([['Title'], ['a'], ['b']], 'csv');
      const db = t.app.get(DataSource);
      const cardsOf = async () => (await db.query(`SELECT count(*)::int AS n FROM cards.cards WHERE project_id = $1`, [project.id]))[0].n;
      const before = await cardsOf();
      await holding(async (holder) => {
        await holder.query(`SELECT id FROM workspace.projects WHERE id = $1 FOR UPDATE`, [project.id]);
        const pending = importing({ discover_file_id: fileId, project_id: project.id, options: { ignore_header: true }, mapping: { '0': { type: 'title' } } }).then((r) => r);
        await untilSomeoneWaitsForALock(db);
        await holder.query(`DELETE FROM workspace.projects WHERE id = $1`, [project.id]);
        await holder.commitTransaction();
        const res = await pending;
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: 'project_id', message: 'no such project visible to you' }]);
      });
      expect(await cardsOf()).toBe(before);
    });

    // The holder keeps the top-level card, which the import locks after the
    // fields; the field's DELETE went through at once and the import failed.
    it('a field deleted once the import holds it: the deletion waits for the import, then removes its values too', async () => {
      if (!onServer) return;
      const { project, estimate, fileId } = await estimateProject('Field held');
      await holding(async (holder, db) => {
        await holder.query(`SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE`, [project.top_level_card_id]);
        const pending = importing({ discover_file_id: fileId, project_id: project.id, options: { ignore_header: true }, mapping: estimateMapping }).then((r) => r);
        await untilSomeoneWaitsForALock(db);
        const deleting = t.http.delete(`${API}/attributes/${estimate.id}`).set(as(alice)).then((r) => r);
        await untilSomeoneWaitsForALock(db, 2);
        await holder.commitTransaction();
        expect((await pending).status).toBe(200);
        expect((await deleting).status).toBe(200);
      });
      const imported = rowCards(await cards(project.id), project);
      expect(imported.map((c) => [c.title, c.attributes])).toEqual([
        ['a', {}],
        ['b', {}],
      ]);
    });
  });

  it('names the body property that is wrong', async () => {
    const project = await ws.project(alice, team, 'Body');
    const fileId = await discover([['Title']], 'csv');
    const field = async (body: Record<string, unknown>) => (await importing(body).expect(400)).body.errors[0].field;
    expect(await field({ project_id: project.id, mapping: { '0': { type: 'title' } } })).toBe('discover_file_id');
    expect(await field({ discover_file_id: fileId, project_id: project.id, mapping: { '1': { type: 'title' } } })).toBe('mapping.1');
    expect(await field({ discover_file_id: fileId, project_id: project.id, mapping: {} })).toBe('mapping');
    expect(await field({ discover_file_id: fileId, project_id: project.id, mapping: { '0': { type: 'title' } }, colour: 1 })).toBe('colour');
    // A field or context named "__proto__" could never be shown in a card's attributes.
    const twoColumns = await discover([['Title', 'Other']], 'csv');
    for (const spec of [{ type: 'attribute', attr_type: 'text', name: '__proto__' }, { type: 'context', name: '__proto__' }]) {
      expect(await field({ discover_file_id: twoColumns, project_id: project.id, mapping: { '0': { type: 'title' }, '1': spec } })).toBe('mapping.1.name');
    }
  });

  it('a mapped name with a control character: the dry run refuses it as the import does, naming mapping.<key>.name', async () => {
    const project = await ws.project(alice, team, 'Control');
    const file = await discover([['Title', 'Other']], 'csv');
    for (const spec of [{ type: 'attribute', attr_type: 'text', name: 'a\nb' }, { type: 'context', name: 'c\td' }]) {
      const body = { discover_file_id: file, project_id: project.id, mapping: { '0': { type: 'title' }, '1': spec } };
      for (const dry_run of [true, false]) {
        const res = await importing({ ...body, dry_run });
        expect([res.status, res.body.errors]).toEqual([400, [{ field: 'mapping.1.name', message: 'must not contain control characters' }]]);
      }
    }
    // A name of digits only, which a field may not have (it would read as a field's id), likewise.
    for (const spec of [{ type: 'attribute', attr_type: 'number', name: '2024' }, { type: 'context', name: ' 7 ' }]) {
      const body = { discover_file_id: file, project_id: project.id, mapping: { '0': { type: 'title' }, '1': spec } };
      for (const dry_run of [true, false]) {
        const res = await importing({ ...body, dry_run });
        expect([res.status, res.body.errors?.[0]?.field, res.body.errors?.[0]?.message]).toEqual([400, 'mapping.1.name', expect.stringMatching(/^must not be only digits/)]);
      }
    }
  });
});

/** Resolves once `count` statements of the test database wait for a lock. */
async function untilSomeoneWaitsForALock(db: DataSource, count = 1): Promise<void> {
  for (let i = 0; ; i++) {
    const [row] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (row.n >= count) return;
    if (i > 500) throw new Error(`fewer than ${count} statements ever waited for a lock`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
