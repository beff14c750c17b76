import { createTestApp, type TestApp, type TestAppOptions, type TestUser } from './test-app.js';
import { workspaceClient, type ProjectJson, type Role } from './workspace-client.js';

/** The suite's other users by name, each with its role in ann's team, or 'outsider'. */
export type TeamUsers = Record<string, Role | 'outsider'>;

export interface TeamWorldOptions<U extends TeamUsers = TeamUsers, P extends string | undefined = string | undefined> extends TestAppOptions {
  /** ann's team (workspaceClient's 'Team' when not given). */
  team?: string;
  /** A project of ann's team, made when its title is given. */
  project?: P;
  /** The suite's other users, made after ann in this order: each joins ann's team with its role, an 'outsider' stays out of it. */
  users?: U;
}

/** What the card-hierarchy, fields and grouping suites start from; each closes `t` after all its tests. */
export type TeamWorld<U extends TeamUsers = Record<never, never>, P extends string | undefined = undefined> = {
  t: TestApp;
  /** Admin of `team`. */
  ann: TestUser;
  team: number;
  users: Record<keyof U, TestUser>;
} & (P extends string ? { project: ProjectJson; root: number } : unknown); // root: the project's top-level card

/**
 * The whole app on a fresh database (`options` as createTestApp's), ann, the
 * other users named, ann's team, its members and its project: in the order
 * the suites made them by hand.
 */
export async function teamWorld<U extends TeamUsers = Record<never, never>, P extends string | undefined = undefined>(
  options: TeamWorldOptions<U, P> = {},
): Promise<TeamWorld<U, P>> {
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
  // P says whether options named a project, so whether `world` has one.
  return world as TeamWorld<U, P>;
}
