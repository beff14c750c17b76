import { expect } from '@jest/globals';
import { teamWorld, type TeamUsers, type TeamWorld, type TeamWorldOptions } from '../../support/team-world.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient, type ProjectJson, type StreamEntryJson } from '../../support/workspace-client.js';

export { API, type ProjectJson, type StreamEntryJson } from '../../support/workspace-client.js';

export interface CardJson {
  id: number;
  ref: number;
  project_id: number;
  parent_id: number | null;
  title: string;
  state: string;
  is_archived: boolean;
  position: number;
  depth: number;
  model_id: number | null;
  attributes: Record<string, unknown>;
  groups: unknown[];
  created_at: string;
  updated_at: string;
}

/** Small HTTP helpers bound to one app; each asserts the status it expects. */
export function cardClient(t: TestApp) {
  const c = {
    ...workspaceClient(t),
    async create(u: TestUser, parentId: number, title: string): Promise<CardJson> {
      const res = await t.http.post(`${API}/cards/${parentId}/children`).set(as(u)).send({ title }).expect(201);
      return res.body as CardJson;
    },
    async get(u: TestUser, id: number): Promise<CardJson> {
      return (await t.http.get(`${API}/cards/${id}`).set(as(u)).expect(200)).body as CardJson;
    },
    /** Every child, archived ones too (the tree as it is stored). */
    async children(u: TestUser, id: number): Promise<CardJson[]> {
      return (await t.http.get(`${API}/cards/${id}/children`).query({ with_archived: 'true' }).set(as(u)).expect(200)).body as CardJson[];
    },
    async childIds(u: TestUser, id: number): Promise<number[]> {
      return (await c.children(u, id)).map((x) => x.id);
    },
    async relocate(u: TestUser, id: number, body: Record<string, unknown>, status = 200) {
      return t.http.post(`${API}/cards/${id}/relocate`).set(as(u)).send(body).expect(status);
    },
    /** Every card of the project listing, all pages. */
    async listing(u: TestUser, projectId: number, query: Record<string, string> = {}): Promise<{ cards: CardJson[]; total: number }> {
      const cards: CardJson[] = [];
      let total = -1;
      for (let page = 1; ; page++) {
        const res = await t.http
          .get(`${API}/projects/${projectId}/cards`)
          .query({ ...query, page: String(page), per_page: '1000' })
          .set(as(u))
          .expect(200);
        total = Number(res.headers['x-service-total']);
        cards.push(...(res.body as CardJson[]));
        if (!res.headers['x-service-nextpage']) break;
      }
      return { cards, total };
    },
    async stream(u: TestUser, id: number, query: Record<string, string> = {}): Promise<StreamEntryJson[]> {
      const res = await t.http.get(`${API}/cards/${id}/stream`).query(query).set(as(u)).expect(200);
      return res.body as StreamEntryJson[];
    },
    /** Positions of a parent's children are 0..n-1 in the order /children gives. */
    async expectDense(u: TestUser, parentId: number): Promise<CardJson[]> {
      const kids = await c.children(u, parentId);
      expect(kids.map((k) => k.position)).toEqual(kids.map((_, i) => i));
      for (const k of kids) expect(k.parent_id).toBe(parentId);
      return kids;
    },
  };
  return c;
}

export type CardClient = ReturnType<typeof cardClient>;

/** teamWorld (ann, her team, the users and project named) with the card client `c`. */
export async function cardWorld<U extends TeamUsers = Record<never, never>, P extends string | undefined = undefined>(
  options: TeamWorldOptions<U, P> = {},
): Promise<TeamWorld<U, P> & { c: CardClient }> {
  const world = await teamWorld(options);
  return { ...world, c: cardClient(world.t) };
}

/**
 * Checks the whole tree of a project from its top-level card: each card's
 * parent_id, depth and position agree with the walk, positions are dense, no
 * card is reached twice, and both listings (with and without archived cards)
 * show exactly the cards the walk finds, with matching totals.
 */
export async function expectConsistentTree(t: TestApp, u: TestUser, project: ProjectJson): Promise<Map<number, CardJson>> {
  const c = cardClient(t);
  const seen = new Map<number, CardJson>();
  const visible: number[] = [];
  const walk = async (id: number, depth: number, hidden: boolean): Promise<void> => {
    const kids = await c.children(u, id);
    expect(kids.map((k) => k.position)).toEqual(kids.map((_, i) => i));
    for (const k of kids) {
      expect(seen.has(k.id)).toBe(false);
      expect(k.parent_id).toBe(id);
      expect(k.depth).toBe(depth + 1);
      expect(k.project_id).toBe(project.id);
      seen.set(k.id, k);
      const kHidden = hidden || k.is_archived;
      if (!kHidden) visible.push(k.id);
      await walk(k.id, depth + 1, kHidden);
    }
  };
  await walk(project.top_level_card_id, 0, false);
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
  const all = await c.listing(u, project.id, { with_archived: 'true' });
  expect(sorted(all.cards.map((x) => x.id))).toEqual(sorted([...seen.keys()]));
  expect(all.total).toBe(seen.size);
  const shown = await c.listing(u, project.id);
  expect(sorted(shown.cards.map((x) => x.id))).toEqual(sorted(visible));
  expect(shown.total).toBe(visible.length);
  return seen;
}

/** Follows parent_id from a card up to the top; fails on a cycle. */
export async function ancestry(t: TestApp, u: TestUser, id: number): Promise<number[]> {
  const c = cardClient(t);
  const chain: number[] = [];
  let current: number | null = id;
  while (current !== null) {
    expect(chain).not.toContain(current);
    chain.push(current);
    current = (await c.get(u, current)).parent_id;
  }
  return chain;
}
