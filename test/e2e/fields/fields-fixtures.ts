import { expect } from '@jest/globals';
import { teamWorld, type TeamUsers, type TeamWorld, type TeamWorldOptions } from '../../support/team-world.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

export { API } from '../../support/workspace-client.js';

export interface CardJson {
  id: number;
  project_id: number;
  model_id: number | null;
  title: string;
  attributes: Record<string, unknown>;
  updated_at: string;
  [key: string]: unknown;
}

export interface AttributeJson {
  id: number;
  name: string;
  type: string;
  project_id: number;
  model_id: number | null;
  options: Record<string, boolean>;
  group_type_id: number | null;
}

export interface World {
  org: number;
  project: number;
  root: number;
}

/** Small HTTP helpers shared by the fields suites. */
export function fieldsClient(t: TestApp) {
  const http = t.http;
  const workspace = workspaceClient(t);
  return {
    team: (owner: TestUser, name = 'Acme') => workspace.team(owner, name),
    addMember: (admin: TestUser, org: number, user: TestUser, role: 'admin' | 'member' | 'viewer' = 'member') =>
      workspace.addMember(admin, org, user, role),
    async world(owner: TestUser, name = 'Acme'): Promise<World> {
      const org = await workspace.team(owner, name);
      const p = await workspace.project(owner, org, `${name} project`);
      return { org, project: p.id, root: p.top_level_card_id };
    },
    async project(owner: TestUser, org: number, title = 'Second'): Promise<{ project: number; root: number }> {
      const p = await workspace.project(owner, org, title);
      return { project: p.id, root: p.top_level_card_id };
    },
    async field(user: TestUser, project: number, name: string, type: string, options?: Record<string, boolean>): Promise<AttributeJson> {
      const res = await http.post(`${API}/projects/${project}/attributes`).set(as(user)).send({ name, type, options }).expect(201);
      return res.body as AttributeJson;
    },
    async card(user: TestUser, parent: number, title = 'card', attributes?: Record<string, unknown>): Promise<CardJson> {
      const res = await http.post(`${API}/cards/${parent}/children`).set(as(user)).send({ title, attributes });
      expect(res.status).toBe(201);
      return res.body as CardJson;
    },
    async get(user: TestUser, card: number): Promise<CardJson> {
      return (await http.get(`${API}/cards/${card}`).set(as(user)).expect(200)).body as CardJson;
    },
    /** POST /cards/{id}/attributes/{field}: answers the response so callers can check refusals. */
    set(user: TestUser, card: number, field: string | number, value: unknown) {
      return http.post(`${API}/cards/${card}/attributes/${encodeURIComponent(String(field))}`).set(as(user)).send({ value });
    },
    setMany(user: TestUser, card: number, body: unknown) {
      return http.post(`${API}/cards/${card}/attributes`).set(as(user)).send(body as object);
    },
    append(user: TestUser, card: number, field: string | number, value: unknown) {
      return http.post(`${API}/cards/${card}/attributes/${encodeURIComponent(String(field))}/append`).set(as(user)).send({ value });
    },
    pop(user: TestUser, card: number, field: string | number, body?: unknown) {
      const req = http.post(`${API}/cards/${card}/attributes/${encodeURIComponent(String(field))}/pop`).set(as(user));
      return body === undefined ? req : req.send(body as object);
    },
    async stream(user: TestUser, card: number): Promise<Array<{ action: string; kind: string; data: Record<string, unknown> }>> {
      return (await http.get(`${API}/cards/${card}/stream`).set(as(user)).expect(200)).body;
    },
  };
}

export type FieldsClient = ReturnType<typeof fieldsClient>;

/**
 * teamWorld for the fields suites: ann's team (Acme unless named) and its
 * project as `w`, named as fieldsClient.world names them, with the fields
 * client `c`.
 */
export async function fieldsWorld<U extends TeamUsers = Record<never, never>>(
  options: Omit<TeamWorldOptions<U>, 'project'> = {},
): Promise<TeamWorld<U> & { c: FieldsClient; w: World }> {
  const team = options.team ?? 'Acme';
  const { project, root, ...world } = await teamWorld({ ...options, team, project: `${team} project` });
  return { ...world, c: fieldsClient(world.t), w: { org: world.team, project: project.id, root } };
}

/** A 400 problem+json that names the field. */
export function expectRefusal(res: { status: number; headers: Record<string, string>; body: Record<string, unknown> }, field: string) {
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(String(res.body.detail)).toContain(field);
}
