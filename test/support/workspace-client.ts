import { as, type TestApp, type TestUser } from './test-app.js';

export const API = '/api/1.0';

export interface ProjectJson {
  id: number;
  organization_id: number;
  title: string;
  top_level_card_id: number;
  created_at: string;
}

export interface StreamEntryJson {
  id: number;
  card_id: number;
  kind: 'comment' | 'activity' | 'log';
  action: string;
  user_id: number | null;
  content: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export type Role = 'admin' | 'member' | 'viewer';

/** Team and project set-up every module's suites share; each call asserts its status. */
export function workspaceClient(t: TestApp) {
  return {
    async team(u: TestUser, name = 'Team'): Promise<number> {
      return (await t.http.post(`${API}/organizations`).set(as(u)).send({ name }).expect(201)).body.id as number;
    },
    async project(u: TestUser, orgId: number, title = 'Project'): Promise<ProjectJson> {
      return (await t.http.post(`${API}/organizations/${orgId}/projects`).set(as(u)).send({ title }).expect(201)).body;
    },
    async addMember(admin: TestUser, orgId: number, user: TestUser, role: Role = 'member'): Promise<void> {
      await t.http.post(`${API}/organizations/${orgId}/members`).set(as(admin)).send({ user: `@${user.username}`, role }).expect(201);
    },
  };
}
