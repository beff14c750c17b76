import { createTestApp, type TestApp, type TestAppOptions, type TestUser } from './test-app.js';
import { workspaceClient, type ProjectJson, type Role } from './workspace-client.js';

export interface TeamWorldOptions extends TestAppOptions {
  /** ann's team (workspaceClient's 'Team' when not given). */
  team?: string;
  /** A project of ann's team, made when its title is given. */
  project?: string;
  /**
   * The suite's other users by name, made after ann in this order: each joins
   * ann's team with its role, an 'outsider' stays out of it.
   */
  users?: Record<string, Role | 'outsider'>;
}

type UsersOf<O> = O extends { users: Record<infer K extends string, unknown> } ? Record<K, TestUser> : Record<never, TestUser>;
type ProjectOf<O> = O extends { project: string } ? { project: ProjectJson; root: number } : unknown;

/** What the card-hierarchy, fields and grouping suites start from; each closes `t` after all its tests. */
export type TeamWorld<O extends TeamWorldOptions> = {
  t: TestApp;
  /** Admin of `team`. */
  ann: TestUser;
  team: number;
  users: UsersOf<O>;
} & ProjectOf<O>; // project, and root: its top-level card, when options.project names it

/**
 * The whole app on a fresh database (`options` as createTestApp's), ann, the
 * other users named, ann's team, its members and its project: in the order
 * the suites made them by hand.
 */
export async function teamWorld<const O extends TeamWorldOptions = Record<never, never>>(options: O = {} as O): Promise<TeamWorld<O>> {
  const t = await createTestApp(options);
  const ann = await t.user();
  const roles = Object.entries(options.users ?? {});
  const users: Record<string, TestUser> = {};
  for (const [name] of roles) users[name] = await t.user();
  const ws = workspaceClient(t);
  const team = await ws.team(ann, options.team);
  for (const [name, role] of roles) if (role !== 'outsider') await ws.addMember(ann, team, users[name], role);
  const project = options.project === undefined ? undefined : await ws.project(ann, team, options.project);
  const world = { t, ann, team, users, ...(project && { project, root: project.top_level_card_id }) };
  // The conditional types above say which of the optional parts options asked for.
  return world as unknown as TeamWorld<O>;
}
