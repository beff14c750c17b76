import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { DataSource } from 'typeorm';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingClient, type ProjectJson } from '../grouping/grouping-fixtures.js';
import { requestStatements } from '../../support/request-statements.js';

/**
 * Listings send card-hierarchy's members of each card as JSON text the
 * database wrote (CardJsonRow); one card (GET, and the answer of every write)
 * is written by the server from the parsed row (toView). The two must be the
 * same card JSON, byte for byte once parsed, for any title, state, flag,
 * model and timestamp.
 */
describe('the card JSON of listings and of one card', () => {
  let t: TestApp;
  let ann: TestUser;
  let c: ReturnType<typeof groupingClient>;
  let project: ProjectJson;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    c = groupingClient(t);
    project = await c.project(ann, await c.team(ann));
  });
  afterAll(() => t.close());

  const body = async (path: string) => {
    const res = await t.http.get(`${API}${path}`).set(as(ann)).expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return res.body as Array<Record<string, unknown>>;
  };

  it('is the same in the project listing, the children, /search and GET /cards/{id}', async () => {
    const top = project.top_level_card_id;
    const titles = [
      'plain',
      'quotes " and \\ backslash, slash / and <script>',
      'new\nline, tab\t, bell \u0007, nul-like \u0001 and \u001f',
      'accents é ü, CJK 漢字, emoji 😀, RTL \u202e, line separator \u2028',
      ',"attributes":{} inside a title',
    ];
    const ids: number[] = [];
    for (const title of titles) ids.push((await c.card(ann, top, title)).id);
    const child = (await c.card(ann, ids[0], 'a child')).id;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
    await t.http.post(`${API}/cards/${ids[1]}/attributes/Estimate`).set(as(ann)).send({ value: 2.5 }).expect(200);
    await t.http.post(`${API}/cards/${ids[2]}/state`).set(as(ann)).send({ state: 'in_progress' }).expect(200);
    const model = (await t.http.post(`${API}/projects/${project.id}/models`).set(as(ann)).send({ name: 'Bug' }).expect(201)).body as { id: number };
    await t.http.post(`${API}/cards/${ids[3]}/model`).set(as(ann)).send({ model_id: model.id }).expect(200);
    await t.http.post(`${API}/cards/${ids[4]}/archive`).set(as(ann)).expect(200);
    // Timestamps with microseconds that round up if rounded: both sides truncate to milliseconds.
    await t.app.get(DataSource).query(`UPDATE cards.cards SET created_at = '2024-02-29 23:59:59.999999+00', updated_at = '2024-03-01 00:00:00.0005+00' WHERE id = $1`, [ids[0]]);

    const one = new Map<number, unknown>();
    for (const id of [...ids, child]) one.set(id, await c.get(ann, id));
    expect(one.get(ids[0])).toMatchObject({ created_at: '2024-02-29T23:59:59.999Z', updated_at: '2024-03-01T00:00:00.000Z' });
    expect([ids[1], ids[2], ids[3], ids[4]].map((id) => one.get(id))).toMatchObject([
      { attributes: { Estimate: 2.5 } },
      { state: 'in_progress' },
      { model_id: model.id },
      { is_archived: true },
    ]);

    const listed = await body(`/projects/${project.id}/cards?with_archived=true`);
    expect(listed.map((x) => x.id)).toEqual([...ids, child]);
    for (const card of listed) expect(card).toEqual(one.get(card.id as number));

    const children = await body(`/cards/${top}/children?with_archived=true`);
    expect(children.map((x) => x.title)).toEqual(titles);
    for (const card of children) expect(card).toEqual(one.get(card.id as number));

    const found = await body(`/search?filter=${encodeURIComponent('hlevel = 1 or hlevel = 2')}&with_archived=true`);
    expect(found.map((x) => x.id)).toEqual([...ids, child]);
    for (const card of found) expect(card).toEqual(one.get(card.id as number));
  });

  it('reads a filtered page’s field definitions with its cards’ rows, and shows the same cards as GET', async () => {
    const cards = await body(`/projects/${project.id}/cards?with_archived=true`);
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    let filtered;
    try {
      filtered = await body(`/projects/${project.id}/cards?filter=${encodeURIComponent('Estimate >= 0 or hlevel >= 1')}&with_archived=true`);
      // The definitions come with the rows (readAlong), not in a statement of their own.
      expect(sent.mock.calls.map(([text]) => String(text)).filter((text) => /^SELECT id, project_id, model_id, name/.test(text.trim()))).toEqual([]);
    } finally {
      sent.mockRestore();
    }
    expect(filtered).toEqual(cards);
    expect(filtered.find((card) => (card.attributes as { Estimate?: unknown }).Estimate === 2.5)).toBeDefined();
  });

  it('reads the values and groups of one card, of a filtered page and of a /search page with their rows, not after them', async () => {
    const valued = await c.project(ann, await c.team(ann));
    const top = valued.top_level_card_id;
    for (const [name, type] of [['Estimate', 'number'], ['Owners', 'members'], ['Votes', 'likes']]) {
      await t.http.post(`${API}/projects/${valued.id}/attributes`).set(as(ann)).send({ name, type }).expect(201);
    }
    const status = await c.type(ann, valued.id, 'Status', true);
    const doing = await c.group(ann, top, status.id, 'Doing');
    const a = (await c.card(ann, top, 'valued a')).id;
    const b = (await c.card(ann, top, 'valued b')).id;
    await t.http.post(`${API}/cards/${a}/attributes/Estimate`).set(as(ann)).send({ value: 3 }).expect(200);
    await t.http.post(`${API}/cards/${a}/attributes/Owners`).set(as(ann)).send({ value: [ann.id] }).expect(200);
    await t.http.post(`${API}/cards/${b}/attributes/Votes`).set(as(ann)).send({ value: 1 }).expect(200);
    await c.addToGroup(ann, b, { group_id: doing.id });
    const expected = [
      { id: a, attributes: { Estimate: 3, Owners: [ann.id], Votes: { score: 0, votes: {} }, Status: [] }, groups: [] },
      { id: b, attributes: { Estimate: null, Owners: [], Votes: { score: 1, votes: { [ann.id]: 1 } }, Status: [doing.id] }, groups: [{ id: doing.id, type_id: status.id, title: 'Doing', card_position: 0 }] },
    ];

    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    // Every statement that reads values or memberships also reads the cards' rows.
    const readApart = () =>
      sent.mock.calls.map(([text]) => String(text)).filter((text) => /fields\.(scalar_values|member_values|like_votes)|grouping\.memberships/.test(text) && !/FROM cards\.cards/.test(text));
    try {
      expect([await c.get(ann, a), await c.get(ann, b)]).toMatchObject(expected);
      // GET /cards/{id}: the key, then one statement (the access check, the row, its values and groups).
      // Not counted: the key's last-used time, written once a minute of use (a slow set-up on a busy machine passes a minute),
      // nor what runs on no request's behalf (requestStatements: the embedded database's upkeep, the rate limits' sweep).
      const lastUsed = (text: unknown) => /^\s*UPDATE\b[^;]*\bapi_keys\b[^;]*\blast_used_at\b/i.test(String(text));
      expect(requestStatements(sent.mock.calls.filter(([text]) => !lastUsed(text)))).toHaveLength(4);
      expect(await body(`/projects/${valued.id}/cards?filter=${encodeURIComponent('valued')}`)).toMatchObject(expected);
      expect(await body(`/search?filter=${encodeURIComponent('valued')}`)).toMatchObject(expected);
      expect(readApart()).toEqual([]);
    } finally {
      sent.mockRestore();
    }
  });

  it('answers a creation with the card JSON the database wrote, the same text as a GET after it', async () => {
    const top = project.top_level_card_id;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Due', type: 'date' }).expect(201);
    for (const title of ['plain', 'quotes " \\ / <b>', 'new\nline \u0001 \u2028 😀 漢字', ',"attributes":{} inside']) {
      const created = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title }).expect(201);
      expect(created.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(created.body).toMatchObject({ title, state: 'undecided', attributes: { Due: null, Estimate: null }, groups: [] });
      const read = await t.http.get(`${API}/cards/${created.body.id}`).set(as(ann)).expect(200);
      expect(created.text).toBe(read.text);
    }
    // With values, the answer is read after the commit, as GET reads it.
    const valued = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'valued', attributes: { Due: '2024-01-02' } }).expect(201);
    expect(valued.text).toBe((await t.http.get(`${API}/cards/${valued.body.id}`).set(as(ann)).expect(200)).text);
  });

  it('answers an empty listing with an empty JSON array', async () => {
    const empty = await c.project(ann, await c.team(ann));
    expect(await body(`/projects/${empty.id}/cards`)).toEqual([]);
    expect(await body(`/cards/${empty.top_level_card_id}/children`)).toEqual([]);
  });
});
