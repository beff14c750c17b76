import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { importWorld, type ImportClient } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingClient, type CardJson, type ProjectJson } from '../grouping/grouping-fixtures.js';

/**
 * A card's children are answered all at once (no paging), so a card with
 * very many is written in parts of at most 500 cards, each read once the one
 * before is sent (20 000 children of 1 004 fields made one string past V8's
 * limit: a 500 after 40 s and 2.5 GB). The parts must make the same listing
 * as one statement did: every child once, in position order, each as
 * GET /cards/{id} shows it.
 */
describe('GET /cards/{id}/children of a card with more children than a part', () => {
  const COUNT = 1203;
  let t: TestApp, alice: TestUser, imports: ImportClient, c: ReturnType<typeof groupingClient>;
  let project: ProjectJson;
  let root: number;

  beforeAll(async () => {
    let team: number;
    ({ t, alice, team, imports } = await importWorld());
    c = groupingClient(t);
    project = await c.project(alice, team);
    root = project.top_level_card_id;
    // Each row a child of the top-level card, with a text value (some needing escapes) and a group.
    const rows = Array.from({ length: COUNT }, (_, i) => `c${i},"note ""${i}"" \\ é",L${i % 7}`);
    const file = await imports.discoverCsv(`Title,Notes,Labels\n${rows.join('\n')}\n`);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'Notes' }, '2': { type: 'context', name: 'Labels' } };
    const res = await imports.importing({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping });
    expect([res.status, res.body.created]).toEqual([200, COUNT]);
  }, 120_000);
  afterAll(() => t.close());

  const children = (query = '') => t.http.get(`${API}/cards/${root}/children${query}`).set(as(alice));

  it('answers every child once, in position order, with its values and groups, written in parts', async () => {
    const last = (await children('?only_ids=true').expect(200)).body.at(-1) as number;
    // The last child moved first: position order is not id order across the parts.
    await t.http.post(`${API}/cards/${last}/relocate`).set(as(alice)).send({ parent_id: root, position: 0 }).expect(200);

    const res = await children().expect(200);
    expect([res.headers['content-type'], res.headers['transfer-encoding'], res.headers['content-length']]).toEqual([
      'application/json; charset=utf-8',
      'chunked',
      undefined,
    ]);
    const listed = res.body as CardJson[];
    expect(listed.map((x) => x.title)).toEqual([`c${COUNT - 1}`, ...Array.from({ length: COUNT - 1 }, (_, i) => `c${i}`)]);
    expect(listed.map((x) => x.position)).toEqual(listed.map((_, i) => i));
    // The cards at the parts' edges, as one card's GET shows them.
    for (const at of [0, 499, 500, 999, 1000, COUNT - 1]) expect(listed[at]).toEqual(await c.get(alice, listed[at].id));
    expect(listed[1000]).toMatchObject({ attributes: { Notes: 'note "999" \\ é', Labels: [expect.any(Number)] }, groups: [{ title: 'L5' }] });

    expect((await children('?only_ids=true').expect(200)).body).toEqual(listed.map((x) => x.id));
  });

  it('leaves archived children out unless asked for, in every part', async () => {
    const ids = (await children('?only_ids=true').expect(200)).body as number[];
    for (const at of [3, 700, 1200]) await t.http.post(`${API}/cards/${ids[at]}/archive`).set(as(alice)).expect(200);
    const shown = (await children().expect(200)).body as CardJson[];
    expect(shown.map((x) => x.id)).toEqual(ids.filter((_, i) => ![3, 700, 1200].includes(i)));
    const all = (await children('?with_archived=true').expect(200)).body as CardJson[];
    expect(all.map((x) => [x.id, x.is_archived])).toEqual(ids.map((id, i) => [id, [3, 700, 1200].includes(i)]));
  });

  it('still refuses before the first byte: an unknown card, a card the caller cannot see', async () => {
    const missing = await t.http.get(`${API}/cards/999999999/children`).set(as(alice)).expect(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    const stranger = await t.user();
    await t.http.get(`${API}/cards/${root}/children`).set(as(stranger)).expect(404);
  });

  it('answers a card with few children in one piece, as before', async () => {
    const parent = await c.card(alice, root, 'few');
    for (const title of ['a', 'b']) await c.card(alice, parent.id, title);
    const res = await t.http.get(`${API}/cards/${parent.id}/children`).set(as(alice)).expect(200);
    expect([res.headers['content-length'], typeof res.headers.etag]).toEqual([String(res.text.length), 'string']);
    expect((res.body as CardJson[]).map((x) => x.title)).toEqual(['a', 'b']);
    expect((await t.http.get(`${API}/cards/${(await c.card(alice, root, 'none')).id}/children`).set(as(alice)).expect(200)).text).toBe('[]');
  });
});
