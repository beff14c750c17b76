import { expect } from '@jest/globals';
import { teamWorld, type TeamUsers, type TeamWorld, type TeamWorldOptions } from '../../support/team-world.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient, type StreamEntryJson } from '../../support/workspace-client.js';

export { API, type ProjectJson, type StreamEntryJson } from '../../support/workspace-client.js';

export interface CardGroupJson {
  id: number;
  type_id: number;
  title: string;
  card_position: number;
}

export interface CardJson {
  id: number;
  project_id: number;
  parent_id: number | null;
  title: string;
  position: number;
  groups: CardGroupJson[];
  updated_at: string;
  [key: string]: unknown;
}

export interface GroupTypeJson {
  id: number;
  project_id: number;
  name: string;
  one_group_per_card: boolean;
  attribute_id: number;
}

export interface GroupJson {
  id: number;
  type_id: number;
  title: string;
  card_id: number;
  position: number;
}

/** HTTP helpers bound to one app; each asserts the status it expects. */
export function groupingClient(t: TestApp) {
  const c = {
    ...workspaceClient(t),
    async card(u: TestUser, parentId: number, title: string, extra: Record<string, unknown> = {}): Promise<CardJson> {
      return (await t.http.post(`${API}/cards/${parentId}/children`).set(as(u)).send({ title, ...extra }).expect(201)).body;
    },
    async get(u: TestUser, id: number): Promise<CardJson> {
      return (await t.http.get(`${API}/cards/${id}`).set(as(u)).expect(200)).body;
    },
    async type(u: TestUser, projectId: number, name: string, oneGroupPerCard = false): Promise<GroupTypeJson> {
      return (
        await t.http
          .post(`${API}/projects/${projectId}/group-types`)
          .set(as(u))
          .send({ name, one_group_per_card: oneGroupPerCard })
          .expect(201)
      ).body;
    },
    async types(u: TestUser, projectId: number): Promise<GroupTypeJson[]> {
      return (await t.http.get(`${API}/projects/${projectId}/group-types`).set(as(u)).expect(200)).body;
    },
    async group(u: TestUser, scopeCardId: number, typeId: number, title: string, position?: number): Promise<GroupJson> {
      return (
        await t.http
          .post(`${API}/cards/${scopeCardId}/groups`)
          .set(as(u))
          .send({ type_id: typeId, title, ...(position === undefined ? {} : { position }) })
          .expect(201)
      ).body;
    },
    async groups(u: TestUser, cardId: number, typeId?: number): Promise<GroupJson[]> {
      const query = typeId === undefined ? {} : { type_id: String(typeId) };
      return (await t.http.get(`${API}/cards/${cardId}/groups`).query(query).set(as(u)).expect(200)).body;
    },
    addToGroup(u: TestUser, cardId: number, body: Record<string, unknown>, status = 200) {
      return t.http.post(`${API}/cards/${cardId}/add-to-group`).set(as(u)).send(body).expect(status);
    },
    removeFromGroup(u: TestUser, cardId: number, body: Record<string, unknown>, status = 200) {
      return t.http.post(`${API}/cards/${cardId}/remove-from-group`).set(as(u)).send(body).expect(status);
    },
    removeFromType(u: TestUser, cardId: number, body: Record<string, unknown>, status = 200) {
      return t.http.post(`${API}/cards/${cardId}/remove-from-group-type`).set(as(u)).send(body).expect(status);
    },
    relocate(u: TestUser, cardId: number, body: Record<string, unknown>, status = 200) {
      return t.http.post(`${API}/cards/${cardId}/relocate`).set(as(u)).send(body).expect(status);
    },
    async stream(u: TestUser, cardId: number): Promise<StreamEntryJson[]> {
      return (await t.http.get(`${API}/cards/${cardId}/stream`).query({ per_page: '1000' }).set(as(u)).expect(200)).body;
    },
    async groupEntries(u: TestUser, cardId: number): Promise<StreamEntryJson[]> {
      return (await c.stream(u, cardId)).filter((e) => e.action === 'card.group_changed');
    },
    /** Group ids of a card (optionally of one type), in the card JSON's order. */
    async groupIdsOf(u: TestUser, cardId: number, typeId?: number): Promise<number[]> {
      const card = await c.get(u, cardId);
      return card.groups.filter((g) => typeId === undefined || g.type_id === typeId).map((g) => g.id);
    },
    /** Every card of a project (all pages, archived included), with its `groups`. */
    async allCards(u: TestUser, projectId: number): Promise<CardJson[]> {
      const cards: CardJson[] = [];
      for (let page = 1; ; page++) {
        const res = await t.http
          .get(`${API}/projects/${projectId}/cards`)
          .query({ with_archived: 'true', page: String(page), per_page: '1000' })
          .set(as(u))
          .expect(200);
        cards.push(...(res.body as CardJson[]));
        if (!res.headers['x-service-nextpage']) return cards;
      }
    },
    /**
     * The whole column of a group, read from every card of the project: card
     * ids in position order. Asserts the positions are exactly 0..n-1.
     */
    async column(u: TestUser, projectId: number, groupId: number): Promise<number[]> {
      const entries: Array<[number, number]> = [];
      for (const card of await c.allCards(u, projectId)) {
        for (const g of card.groups) if (g.id === groupId) entries.push([g.card_position, card.id]);
      }
      entries.sort((a, b) => a[0] - b[0]);
      expect(entries.map(([p]) => p)).toEqual(entries.map((_, i) => i));
      return entries.map(([, id]) => id);
    },
  };
  return c;
}

export type GroupingClient = ReturnType<typeof groupingClient>;

/**
 * teamWorld for the grouping suites: ann's team (Acme unless named), its
 * project (Board unless named) and top-level card `root`, with the grouping
 * client `c`.
 */
export async function groupingWorld<U extends TeamUsers = Record<never, never>>(
  options: TeamWorldOptions<U> = {},
): Promise<TeamWorld<U, string> & { c: GroupingClient }> {
  const world = await teamWorld({ ...options, team: options.team ?? 'Acme', project: options.project ?? 'Board' });
  return { ...world, c: groupingClient(world.t) };
}
