import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardWorld, type CardClient, type ProjectJson, type StreamEntryJson } from './card-fixtures.js';

/** A public base unlike the test server's address: links are built from BASE_URL. */
const PUBLIC_BASE = 'https://cards.example.test/api/1.0';

const ids = (res: Response) => (res.body as StreamEntryJson[]).map((e) => e.id);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A card's stream by keyset (`X-Service-NextCursor`, `cursor=`), newest first, as the card listings page. */
describe('card stream: keyset pages by cursor', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson, top: number;
  let card: number;
  let other: number;

  const stream = (id: number, query: Record<string, string>) => t.http.get(`${API}/cards/${id}/stream`).query(query).set(as(ann));
  const comment = (id: number, content: string) => t.http.post(`${API}/cards/${id}/comments`).set(as(ann)).send({ content }).expect(201);

  beforeAll(async () => {
    ({ t, c, ann, project, root: top } = await cardWorld({ team: 'Stream keyset', project: 'K', env: { BASE_URL: PUBLIC_BASE } }));
    card = (await c.create(ann, top, 'talked about')).id;
    other = (await c.create(ann, top, 'elsewhere')).id;
    for (let i = 0; i < 60; i++) await comment(card, `comment ${i}`);
    await comment(other, 'hello');
  });
  afterAll(() => t.close());

  it('walks the stream by cursor while another client comments: each entry once, newest first, none missing', async () => {
    const before = (await c.stream(ann, card, { per_page: '1000' })).map((e) => e.id);
    expect(before).toHaveLength(61);
    let writing = true;
    const added: number[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        added.push((await comment(card, `while walking ${i}`)).body.id as number);
        await sleep(20);
      }
    })();
    const seen: number[] = [];
    try {
      let res = await stream(card, { per_page: '10' }).expect(200);
      for (let step = 0; ; step++) {
        seen.push(...ids(res));
        const cursor = res.headers['x-service-nextcursor'];
        if (!cursor) break;
        // A comment lands between every two pages.
        for (const n = added.length; added.length === n; ) await sleep(5);
        res = await stream(card, { per_page: '10', cursor }).expect(200);
        expect(step).toBeLessThan(20);
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(added.length).toBeGreaterThanOrEqual(6);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    // Every entry of the start is there; the comments added after the first page are before the walk.
    expect(seen).toEqual(expect.arrayContaining(before));
    expect(seen.filter((id) => !before.includes(id)).every((id) => added.includes(id))).toBe(true);
  });

  it('page answers a cursor too, the cursor continues where the page ended, and Link carries it', async () => {
    const page1 = await stream(card, { page: '1', per_page: '7' }).expect(200);
    const page2 = await stream(card, { page: '2', per_page: '7' }).expect(200);
    const cursor = page1.headers['x-service-nextcursor'];
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    // The page numbers stay for the original's clients; the link is by cursor.
    expect(page1.headers).toMatchObject({ 'x-service-page': '1', 'x-service-nextpage': '2', 'x-kantree-nextpage': '2' });
    expect(page1.headers.link).toBe(`<${PUBLIC_BASE}/cards/${card}/stream?per_page=7&cursor=${cursor}>; rel="next"`);
    const byCursor = await stream(card, { per_page: '7', cursor }).expect(200);
    expect(byCursor.body).toEqual(page2.body);
    const next = byCursor.headers['x-service-nextcursor'];
    expect(byCursor.headers.link).toBe(`<${PUBLIC_BASE}/cards/${card}/stream?per_page=7&cursor=${next}>; rel="next"`);
    // A cursor page does not know its number; the totals still come.
    expect(byCursor.headers['x-service-page']).toBeUndefined();
    expect(byCursor.headers['x-service-nextpage']).toBeUndefined();
    expect(byCursor.headers['x-service-total']).toBe(page1.headers['x-service-total']);
    expect(byCursor.headers['x-kantree-totalpages']).toBe(page1.headers['x-service-totalpages']);
  });

  it('has neither cursor nor link on the last page, by page or by cursor', async () => {
    const only = await stream(other, {}).expect(200);
    expect(ids(only)).toHaveLength(2);
    expect(only.headers['x-service-nextcursor']).toBeUndefined();
    expect(only.headers.link).toBeUndefined();
    const first = await stream(other, { per_page: '1' }).expect(200);
    const last = await stream(other, { per_page: '1', cursor: first.headers['x-service-nextcursor'] }).expect(200);
    expect([...ids(first), ...ids(last)]).toEqual(ids(only));
    expect(last.headers['x-service-nextcursor']).toBeUndefined();
    expect(last.headers.link).toBeUndefined();
  });

  async function expectBadCursor(req: ReturnType<typeof stream>) {
    const res = await req.expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, errors: [{ field: 'cursor' }] });
  }

  it('refuses cursor with page, and malformed, edited or foreign cursors, with a 400 problem+json', async () => {
    const good = (await stream(card, { per_page: '2' })).headers['x-service-nextcursor'] as string;
    await stream(card, { per_page: '2', cursor: good }).expect(200);
    await expectBadCursor(stream(card, { cursor: good, page: '1' }));
    for (const bad of ['', 'x', '!!!', 'a'.repeat(100)]) await expectBadCursor(stream(card, { cursor: bad }));
    const [id, check] = Buffer.from(good, 'base64url').toString().split('.');
    await expectBadCursor(stream(card, { cursor: Buffer.from(`${Number(id) - 1}.${check}`).toString('base64url') }));
    // Another card's stream, and a card listing of the project.
    await expectBadCursor(stream(other, { cursor: good }));
    const listing = (await t.http.get(`${API}/projects/${project.id}/cards`).query({ per_page: '1' }).set(as(ann)).expect(200)).headers['x-service-nextcursor'];
    await expectBadCursor(stream(card, { cursor: listing }));
  });

  it('documents cursor and X-Service-NextCursor in the OpenAPI document', async () => {
    const spec = (await t.http.get(`${API}/spec.json`).expect(200)).body;
    const op = spec.paths[`${API}/cards/{id}/stream`]?.get ?? spec.paths['/cards/{id}/stream']?.get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('cursor');
    expect(Object.keys(op.responses['200'].headers)).toContain('X-Service-NextCursor');
  });
});
