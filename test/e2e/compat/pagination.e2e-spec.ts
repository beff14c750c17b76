import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { listen, rawClient, teamWithProject, type RawAnswer, type RawClient, type RawProject } from './raw-client.js';

/** A public base unlike the address the test server listens on: links must be built from BASE_URL. */
const PUBLIC_BASE = 'https://cards.example.test/base/api/1.0';

const NAMES = ['Page', 'NextPage', 'Total', 'TotalPages'];

/** The X-Kantree-* values of an answer, which must repeat the X-Service-* ones. */
function kantree(res: RawAnswer): Record<string, string | null> {
  const values: Record<string, string | null> = {};
  for (const name of NAMES) {
    values[name] = res.headers.get(`x-kantree-${name}`);
    expect({ name, value: res.headers.get(`x-service-${name}`) }).toEqual({ name, value: values[name] });
  }
  return values;
}

/** Issue 14.3: the original's pagination headers and `Link: <…>; rel="next"`. */
describe('compatibility: X-Kantree-* pagination headers and Link', () => {
  let t: TestApp;
  let c: RawClient;
  let project: RawProject;
  let org: number;
  const cards: number[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { BASE_URL: PUBLIC_BASE } });
    c = rawClient(await listen(t), (await t.user()).apiKey);
    ({ org, project } = await teamWithProject(c, 'Paging'));
    for (let i = 1; i <= 120; i++) {
      cards.push((await c.json<{ id: number }>('POST', `/cards/${project.top_level_card_id}/children`, { title: `card ${i}` }, 201)).id);
    }
  });
  afterAll(() => t.close());

  it('a client following X-Kantree-NextPage gets all 120 cards, not the first 100', async () => {
    const seen: number[] = [];
    const pages: Record<string, string | null>[] = [];
    let next: string | null = '1';
    while (next) {
      const res = await c.call('GET', `/projects/${project.id}/cards?page=${next}`);
      expect(res.status).toBe(200);
      const headers = kantree(res);
      pages.push(headers);
      seen.push(...(res.body as { id: number }[]).map((card) => card.id));
      next = headers.NextPage;
    }
    expect(pages).toEqual([
      { Page: '1', NextPage: '2', Total: '120', TotalPages: '2' },
      { Page: '2', NextPage: null, Total: '120', TotalPages: '2' },
    ]);
    expect(seen).toEqual(cards);
  });

  it('a client following Link rel="next" walks every page, keeping its other query parameters', async () => {
    // The card listings link the next page by its cursor (X-Service-NextCursor): the URL is opaque to the client.
    const expectedLinks: string[] = [];
    const links: string[] = [];
    const seen: number[] = [];
    let url: string | undefined = `/projects/${project.id}/cards?with_archived=true&per_page=50`;
    while (url) {
      const res = await c.call('GET', url);
      expect(res.status).toBe(200);
      seen.push(...(res.body as { id: number }[]).map((card) => card.id));
      const link = res.headers.get('link');
      if (!link) {
        // A page asked for by cursor does not know its number.
        expect(kantree(res)).toEqual({ Page: null, NextPage: null, Total: '120', TotalPages: '3' });
        break;
      }
      links.push(link);
      expectedLinks.push(`<${PUBLIC_BASE}/projects/${project.id}/cards?with_archived=true&per_page=50&cursor=${res.headers.get('x-service-nextcursor')}>; rel="next"`);
      const target = /^<([^>]+)>; rel="next"$/.exec(link)![1];
      expect(target.startsWith(PUBLIC_BASE)).toBe(true);
      // The public base stands for this server (a proxy would map it): follow the link here.
      url = `${c.api}${target.slice(PUBLIC_BASE.length)}`;
    }
    expect(links).toHaveLength(2);
    expect(links).toEqual(expectedLinks);
    expect(seen).toEqual(cards);
  });

  it('every paginated listing answers both header families', async () => {
    await c.json('POST', `/cards/${cards[0]}/comments`, { content: 'hello' }, 201);
    await c.json('POST', '/organizations', { name: 'Second team' }, 201);
    for (const path of [
      '/organizations?per_page=1',
      `/organizations/${org}/projects`,
      '/projects/all',
      `/projects/${project.id}/cards?only_ids=true&per_page=7`,
      `/cards/${cards[0]}/stream`,
    ]) {
      const res = await c.call('GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      const values = kantree(res);
      expect({ path, page: values.Page, total: Number(values.Total) > 0 }).toEqual({ path, page: '1', total: true });
      expect({ path, link: res.headers.get('link') !== null }).toEqual({ path, link: values.NextPage !== null });
    }
    const teams = await c.call('GET', '/organizations?per_page=1');
    expect(teams.headers.get('link')).toBe(`<${PUBLIC_BASE}/organizations?per_page=1&page=2>; rel="next"`);
  });
});
