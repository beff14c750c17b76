import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { importClient } from '../../support/import-client.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';

/**
 * DESIGN.md §2's limits count characters: "titles and names ≤ 1024
 * characters, `text` values ≤ 10 000, `content` ≤ 100 000". A character is
 * a code point, as PostgreSQL's char_length() counts it, so an emoji is one
 * character although JavaScript's `length` counts two UTF-16 units. Every
 * limit is checked at its edge with text that is mostly emoji: the longest
 * text passes, one character more is refused with a 400 naming the property.
 */
const EMOJI = '😀';

/** `max` characters: a letter (so the UTF-16 length is odd) and emoji. */
const atLimit = (letter: string, max: number) => letter + EMOJI.repeat(max - 1);
const overLimit = (letter: string, max: number) => letter + EMOJI.repeat(max);

describe('character limits count code points, not UTF-16 units', () => {
  let t: TestApp;
  let ann: TestUser;
  let org: number;
  let project: number;
  let root: number;
  let card: number;
  let model: number;
  let typeId: number;

  const post = (path: string, body: Record<string, unknown>) => t.http.post(`${API}${path}`).set(as(ann)).send(body);

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    org = (await post('/organizations', { name: 'Limits' }).expect(201)).body.id;
    const p = (await post(`/organizations/${org}/projects`, { title: 'Board' }).expect(201)).body;
    [project, root] = [p.id, p.top_level_card_id];
    card = (await post(`/cards/${root}/children`, { title: 'Card' }).expect(201)).body.id;
    model = (await post(`/projects/${project}/models`, { name: 'Bug' }).expect(201)).body.id;
    typeId = (await post(`/projects/${project}/group-types`, { name: 'Status', one_group_per_card: true }).expect(201)).body.id;
    await post(`/projects/${project}/attributes`, { name: 'Notes', type: 'text' }).expect(201);
    await post(`/projects/${project}/attributes`, { name: 'Body', type: 'content' }).expect(201);
  });
  afterAll(() => t.close());

  /** Each limit: its property, its maximum, and the request that sends a text there. */
  const limits: [string, string, number, (text: string) => ReturnType<typeof post>][] = [
    ['a team name', 'name', 1024, (name) => post('/organizations', { name })],
    ['a project title', 'title', 1024, (title) => post(`/organizations/${org}/projects`, { title })],
    ['a new card title', 'title', 1024, (title) => post(`/cards/${root}/children`, { title })],
    ['a changed card title', 'title', 1024, (title) => t.http.put(`${API}/cards/${card}`).set(as(ann)).send({ title })],
    ['a comment', 'content', 100_000, (content) => post(`/cards/${card}/comments`, { content })],
    ['a field name', 'name', 1024, (name) => post(`/projects/${project}/attributes`, { name, type: 'number' })],
    ['a model name', 'name', 1024, (name) => post(`/projects/${project}/models`, { name })],
    ["a model's field name", 'name', 1024, (name) => post(`/models/${model}/attributes`, { name, type: 'bool' })],
    ['a group type name', 'name', 1024, (name) => post(`/projects/${project}/group-types`, { name })],
    ['a group title', 'title', 1024, (title) => post(`/cards/${root}/groups`, { type_id: typeId, title })],
    ['an API key name', 'name', 200, (name) => post('/me/api-keys', { name })],
    ['a text value', 'Notes', 10_000, (value) => post(`/cards/${card}/attributes/Notes`, { value })],
    ['a content value', 'Body', 100_000, (value) => post(`/cards/${card}/attributes/Body`, { value })],
  ];

  it.each(limits.map(([what, field, max, send], i) => [what, field, max, send, String.fromCharCode(97 + i)] as const))(
    'takes %s of its %s maximum characters in emoji, and refuses one more',
    async (_what, field, max, send, letter) => {
      const taken = await send(atLimit(letter, max));
      expect(taken.status).toBeLessThan(300);
      const refused = await send(overLimit(letter, max));
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain(field);
    },
  );

  it('stores and shows a title at the limit whole', async () => {
    const title = atLimit('z', 1024);
    const created = (await post(`/cards/${root}/children`, { title }).expect(201)).body;
    expect(created.title).toBe(title);
    const read = await t.http.get(`${API}/cards/${created.id}`).set(as(ann)).expect(200);
    expect([...read.body.title]).toHaveLength(1024);
  });

  it("gives a new project's top-level card the whole title, emoji included", async () => {
    const title = atLimit('y', 1024);
    const p = (await post(`/organizations/${org}/projects`, { title }).expect(201)).body;
    const top = await t.http.get(`${API}/cards/${p.top_level_card_id}`).set(as(ann)).expect(200);
    expect(top.body.title).toBe(title);
  });

  it('counts an emoji with its presentation selector as the two code points it is, everywhere alike', async () => {
    // '❤️' is U+2764 U+FE0F: class-validator's MaxLength counted it once, the services twice.
    await post('/organizations', { name: '❤️'.repeat(512) }).expect(201);
    await post('/organizations', { name: '❤️'.repeat(513) }).expect(400);
    await post(`/cards/${root}/children`, { title: '❤️'.repeat(512) }).expect(201);
    await post(`/cards/${root}/children`, { title: '❤️'.repeat(513) }).expect(400);
  });

  it("checks an import's titles and names the same way", async () => {
    const importer = importClient(t, ann);
    const fileId = await importer.discover([['Title', 'Notes'], [atLimit('x', 1024), 'a'], [overLimit('x', 1024), 'b']]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: atLimit('w', 1024) } };
    const refused = await importer.importing({ discover_file_id: fileId, project_id: project, options: { ignore_header: true }, mapping, dry_run: true });
    // The second row's title is one character too long; the first row and the mapped name are at the limit.
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ row: 3, column: 0 })]);
    const tooLongName = { ...mapping, '1': { type: 'attribute', attr_type: 'text', name: overLimit('w', 1024) } };
    const named = await importer.importing({ discover_file_id: fileId, project_id: project, mapping: tooLongName, dry_run: true });
    expect(named.status).toBe(400);
    expect(JSON.stringify(named.body)).toContain('mapping.1.name');
  });
});
