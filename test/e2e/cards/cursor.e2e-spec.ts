import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardClient, type CardJson, type ProjectJson } from '../card-hierarchy/card-fixtures.js';

/** A public base unlike the test server's address: links are built from BASE_URL. */
const PUBLIC_BASE = 'https://cards.example.test/api/1.0';

const ids = (res: Response) => (res.body as (CardJson | number)[]).map((x) => (typeof x === 'number' ? x : x.id));
const ascending = (a: number, b: number) => a - b;

/** Issue 15 / DESIGN.md §2: keyset pages of the project listing (`X-Service-NextCursor`, `cursor=`). */
describe('cards: keyset pages by cursor', () => {
  let t: TestApp;
  let ann: TestUser;
  let c: ReturnType<typeof cardClient>;
  let project: ProjectJson;
  let other: ProjectJson;
  let top: number;

  const list = (projectId: number, query: Record<string, string>) =>
    t.http.get(`${API}/projects/${projectId}/cards`).query(query).set(as(ann));

  beforeAll(async () => {
    t = await createTestApp({ env: { BASE_URL: PUBLIC_BASE } });
    c = cardClient(t);
    ann = await t.user();
    const org = await c.team(ann, 'Keyset');
    project = await c.project(ann, org, 'Deep');
    other = await c.project(ann, org, 'Other');
    top = project.top_level_card_id;
    // Three levels, so the id order of the listing is not the tree order.
    const parents = [top];
    for (let i = 0; i < 20; i++) {
      const card = await c.create(ann, parents[i % parents.length], `card ${i}`);
      if (i % 4 === 0) parents.push(card.id);
    }
    await c.create(ann, other.top_level_card_id, 'elsewhere');
  });
  afterAll(() => t.close());

  it('walks the whole project by cursor while cards are being added: each card once, in id order', async () => {
    const before = (await c.listing(ann, project.id)).cards.map((x) => x.id);
    const seen: number[] = [];
    const added: number[] = [];
    let res = await list(project.id, { per_page: '3' }).expect(200);
    for (let step = 0; ; step++) {
      seen.push(...ids(res));
      const cursor = res.headers['x-service-nextcursor'];
      if (!cursor) break;
      // Two creations race with the request for the next page.
      const [next, ...created] = await Promise.all([
        list(project.id, { per_page: '3', cursor }).expect(200),
        ...(step < 5 ? [c.create(ann, top, `added ${step}a`), c.create(ann, before[step], `added ${step}b`)] : []),
      ]);
      added.push(...created.map((x) => (x as CardJson).id));
      res = next as Response;
      expect(step).toBeLessThan(50);
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort(ascending));
    // Every card that existed throughout is there, and so is every card added
    // while the walk was still before it (new ids are higher than the old ones).
    expect(seen).toEqual(expect.arrayContaining(before));
    expect(seen).toEqual(expect.arrayContaining(added));
    expect(seen).toEqual((await c.listing(ann, project.id)).cards.map((x) => x.id));
    // The last page has neither a cursor nor a link.
    expect(res.headers['x-service-nextcursor']).toBeUndefined();
    expect(res.headers.link).toBeUndefined();
  });

  it('page answers a cursor too, and the cursor continues where the page ended', async () => {
    const page1 = await list(project.id, { page: '1', per_page: '5' }).expect(200);
    const page2 = await list(project.id, { page: '2', per_page: '5' }).expect(200);
    const cursor = page1.headers['x-service-nextcursor'];
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const byCursor = await list(project.id, { per_page: '5', cursor }).expect(200);
    expect(ids(byCursor)).toEqual(ids(page2));
    expect(ids(byCursor)).toHaveLength(5);
    expect(byCursor.body).toEqual(page2.body);
    // Page requests keep their page numbers, but link the next page by cursor, as a cursor request does.
    expect(page1.headers).toMatchObject({ 'x-service-nextpage': '2', 'x-kantree-nextpage': '2' });
    expect(page1.headers.link).toBe(`<${PUBLIC_BASE}/projects/${project.id}/cards?per_page=5&cursor=${cursor}>; rel="next"`);
    const next = byCursor.headers['x-service-nextcursor'];
    expect(byCursor.headers.link).toBe(`<${PUBLIC_BASE}/projects/${project.id}/cards?per_page=5&cursor=${next}>; rel="next"`);
    // A cursor request does not know its page number; the totals still come.
    expect(byCursor.headers['x-service-page']).toBeUndefined();
    expect(byCursor.headers['x-service-nextpage']).toBeUndefined();
    expect(byCursor.headers['x-service-total']).toBe(page1.headers['x-service-total']);
    expect(byCursor.headers['x-kantree-totalpages']).toBe(page1.headers['x-service-totalpages']);
  });

  it('follows Link rel="next" by cursor to the end, keeping the other query parameters', async () => {
    const all = (await c.listing(ann, project.id)).cards.map((x) => x.id);
    const first = await list(project.id, { per_page: '7', only_ids: 'true' }).expect(200);
    const seen = ids(first);
    let link = first.headers.link;
    let cursor = first.headers['x-service-nextcursor'];
    let followed = 0;
    while (cursor) {
      if (followed) {
        const m = /^<([^>]+)>; rel="next"$/.exec(link);
        const url = new URL(m![1]);
        expect(url.searchParams.get('only_ids')).toBe('true');
        expect(url.searchParams.get('cursor')).toBe(cursor);
      }
      const res = await list(project.id, { per_page: '7', only_ids: 'true', cursor }).expect(200);
      expect(res.body.every((x: unknown) => typeof x === 'number')).toBe(true);
      seen.push(...ids(res));
      link = res.headers.link;
      cursor = res.headers['x-service-nextcursor'];
      followed++;
    }
    expect(seen).toEqual(all);
    expect(followed).toBe(Math.ceil(all.length / 7) - 1);
  });

  it('following Link from a first page by page number skips no card when earlier cards are deleted', async () => {
    const own = await c.project(ann, await c.team(ann, 'Deleting'), 'Thirty');
    const made: number[] = [];
    for (let i = 0; i < 30; i++) made.push((await c.create(ann, own.top_level_card_id, `card ${i}`)).id);
    const first = await list(own.id, { only_ids: 'true', per_page: '10' }).expect(200);
    expect(ids(first)).toEqual(made.slice(0, 10));
    // The numbers stay for the original's clients.
    expect(first.headers).toMatchObject({ 'x-service-page': '1', 'x-service-nextpage': '2', 'x-kantree-nextpage': '2' });
    for (const id of made.slice(0, 2)) await t.http.delete(`${API}/cards/${id}`).set(as(ann)).expect(200);
    const seen = ids(first);
    let link: string | undefined = first.headers.link;
    for (let step = 0; link; step++) {
      const target: string = /^<([^>]+)>; rel="next"$/.exec(link)![1];
      expect(target.startsWith(PUBLIC_BASE)).toBe(true);
      const res: Response = await t.http.get(`${API}${target.slice(PUBLIC_BASE.length)}`).set(as(ann)).expect(200);
      seen.push(...ids(res));
      link = res.headers.link;
      expect(step).toBeLessThan(5);
    }
    // The first page's 10 (two of them deleted since), then every one after them: none skipped.
    expect(seen).toEqual(made);
  });

  it('with_archived has cursors of its own and lists the archived cards', async () => {
    const victim = (await c.create(ann, top, 'to archive')).id;
    await t.http.post(`${API}/cards/${victim}/archive`).set(as(ann)).expect(200);
    const walk = async (query: Record<string, string>) => {
      const seen: number[] = [];
      let res = await list(project.id, { ...query, per_page: '4' }).expect(200);
      seen.push(...ids(res));
      while (res.headers['x-service-nextcursor']) {
        res = await list(project.id, { ...query, per_page: '4', cursor: res.headers['x-service-nextcursor'] }).expect(200);
        seen.push(...ids(res));
      }
      return seen;
    };
    expect(await walk({ with_archived: 'true' })).toContain(victim);
    expect(await walk({})).not.toContain(victim);
    // A cursor of one listing is refused by the other.
    const archivedCursor = (await list(project.id, { with_archived: 'true', per_page: '4' })).headers['x-service-nextcursor'];
    await expectBadCursor(list(project.id, { cursor: archivedCursor }));
  });

  async function expectBadCursor(req: ReturnType<typeof list>) {
    const res = await req.expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, errors: [{ field: 'cursor' }] });
    expect(res.body.error).toBe(res.body.detail);
  }

  it('refuses cursor with page, and malformed, edited or foreign cursors, with a 400 problem+json', async () => {
    const good = (await list(project.id, { per_page: '2' })).headers['x-service-nextcursor'] as string;
    await list(project.id, { per_page: '2', cursor: good }).expect(200);
    await expectBadCursor(list(project.id, { cursor: good, page: '2' }));
    await expectBadCursor(list(project.id, { cursor: good, page: '1' }));
    for (const bad of ['', 'x', '!!!', '12', 'null', 'a'.repeat(100), Buffer.from('5.').toString('base64url')]) {
      await expectBadCursor(list(project.id, { cursor: bad }));
    }
    // The same token with another id: a cursor edited by hand.
    const [id, check] = Buffer.from(good, 'base64url').toString().split('.');
    const edited = Buffer.from(`${Number(id) + 1}.${check}`).toString('base64url');
    await expectBadCursor(list(project.id, { cursor: edited }));
    // A cursor of another project's listing.
    await expectBadCursor(list(other.id, { cursor: good }));
    // Twice the parameter.
    await expectBadCursor(t.http.get(`${API}/projects/${project.id}/cards?cursor=${good}&cursor=${good}`).set(as(ann)));
  });

  /** Every id of a listing, by cursor or by page, per_page 3. */
  async function walk(path: string, query: Record<string, string>, by: 'cursor' | 'page') {
    const seen: number[] = [];
    let res = await t.http.get(`${API}${path}`).query({ ...query, per_page: '3' }).set(as(ann)).expect(200);
    seen.push(...ids(res));
    for (let page = 2; by === 'cursor' ? res.headers['x-service-nextcursor'] : res.headers['x-service-nextpage']; page++) {
      const next = by === 'cursor' ? { cursor: res.headers['x-service-nextcursor'] } : { page: String(page) };
      res = await t.http.get(`${API}${path}`).query({ ...query, per_page: '3', ...next }).set(as(ann)).expect(200);
      seen.push(...ids(res));
    }
    return seen;
  }

  it('the filter and /search page by the same cursors, scoped to their filter', async () => {
    const filtered = await walk(`/projects/${project.id}/cards`, { filter: 'card', only_ids: 'true' }, 'cursor');
    expect(filtered.length).toBeGreaterThan(6);
    expect(filtered).toEqual(await walk(`/projects/${project.id}/cards`, { filter: 'card', only_ids: 'true' }, 'page'));
    const everywhere = await walk('/search', { filter: 'card', only_ids: 'true' }, 'cursor');
    expect(everywhere).toEqual(await walk('/search', { filter: 'card', only_ids: 'true' }, 'page'));
    expect(everywhere).toEqual(expect.arrayContaining(filtered));
    // A cursor of the plain listing is refused by the filtered one, and one of /search by the project listing.
    const plain = (await list(project.id, { per_page: '3' })).headers['x-service-nextcursor'];
    await expectBadCursor(list(project.id, { filter: 'card', cursor: plain }));
    const search = (await t.http.get(`${API}/search`).query({ filter: 'card', per_page: '3' }).set(as(ann))).headers['x-service-nextcursor'];
    await expectBadCursor(list(project.id, { filter: 'card', cursor: search }));
    await expectBadCursor(t.http.get(`${API}/search`).query({ filter: 'card', cursor: search, page: '2' }).set(as(ann)));
  });

  it('documents cursor and X-Service-NextCursor in the OpenAPI document', async () => {
    const spec = (await t.http.get(`${API}/spec.json`).expect(200)).body;
    const op = spec.paths['/api/1.0/projects/{id}/cards']?.get ?? spec.paths['/projects/{id}/cards']?.get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('cursor');
    expect(Object.keys(op.responses['200'].headers)).toContain('X-Service-NextCursor');
  });
});
