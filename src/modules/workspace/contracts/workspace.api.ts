import type { Actor } from '../../../shared/domain/actor.js';

export type Role = 'admin' | 'member' | 'viewer';
/** read: any member; write: admin or member; admin: admin only. */
export type AccessMode = 'read' | 'write' | 'admin';

export interface OrganizationAccess {
  organizationId: number;
  role: Role;
}

export interface ProjectAccess extends OrganizationAccess {
  projectId: number;
  topLevelCardId: number;
}

/** A project just created, before it has its top-level card. */
export interface NewProject {
  projectId: number;
  organizationId: number;
  title: string;
}

/** The project JSON of DESIGN.md §4. */
export interface ProjectView {
  id: number;
  organization_id: number;
  title: string;
  top_level_card_id: number;
  created_at: string;
}

/** Public API of the workspace module: teams, membership and projects. */
export abstract class WorkspaceApi {
  /** The caller's access to a team: 404 when not a member, 403 when the role is too weak. */
  abstract requireOrganization(organizationId: number, actor: Actor, mode: AccessMode): Promise<OrganizationAccess>;
  /**
   * SQL for the caller's role in a team, for a module below to read in its own
   * statement (STYLE.md §2.6) instead of a round trip of its own: a scalar
   * subquery giving the role, or NULL when the caller is not a member.
   * `organizationIdSql` is the SQL of the team's id (a column of the caller's
   * query), `userIdParam` the statement's parameter holding the caller's user id.
   */
  abstract memberRoleSql(organizationIdSql: string, userIdParam: string): string;
  /**
   * SQL that is true when the caller's role in the team allows `mode` (as
   * `accessFromRole` decides), for a statement that writes only if it does.
   * Its arguments are those of `memberRoleSql`.
   */
  abstract memberAllowsSql(organizationIdSql: string, userIdParam: string, mode: AccessMode): string;
  /** The access a role read through `memberRoleSql` gives: 404 when null, 403 when too weak for `mode`. */
  abstract accessFromRole(organizationId: number, role: Role | null, mode: AccessMode): OrganizationAccess;
  /** As `memberRoleSql`, for the team of the project whose id is `projectIdSql`: NULL when there is no such project or the caller is not a member. */
  abstract projectRoleSql(projectIdSql: string, userIdParam: string): string;
  /** The access a role read through `projectRoleSql` gives: 404 (the project's) when null, 403 when too weak. */
  abstract projectAccessFromRole(role: Role | null, mode: AccessMode): Role;
  /** The caller's access to a project, with the same rules as its team. */
  abstract requireProject(projectId: number, actor: Actor, mode: AccessMode): Promise<ProjectAccess>;
  /** Ids of the team's members among `userIds`. */
  abstract membersAmong(organizationId: number, userIds: number[]): Promise<number[]>;
  /** All member ids of a team. */
  abstract memberIds(organizationId: number): Promise<number[]>;
  /** Ids of every project the caller can see: all projects of every team they belong to. */
  abstract visibleProjectIds(actor: Actor): Promise<number[]>;
  /**
   * First step of creating a project (in the caller's unit of work): checks
   * write access to the team and inserts the project row. `cards` then makes
   * the top-level card and calls `attachTopLevelCard`.
   */
  abstract createProject(organizationId: number, title: string, actor: Actor): Promise<NewProject>;
  /** Records the project's top-level card (workspace owns this link) and returns the project JSON. */
  abstract attachTopLevelCard(projectId: number, topLevelCardId: number): Promise<ProjectView>;
  /**
   * First step of deleting a project (in the caller's unit of work): holds
   * the project row FOR UPDATE, before any other lock ("The one lock
   * order", step 0), checks that the caller is a team admin (404, 403) and
   * lifts the statement timeout for the transaction (a project's cascades
   * have no size cap).
   */
  abstract prepareProjectDeletion(projectId: number, actor: Actor): Promise<ProjectAccess>;
  /**
   * Last step: publishes ProjectDeleted, on which each module drops the
   * project's rows in the transaction, and deletes the project row.
   */
  abstract finishProjectDeletion(project: ProjectAccess, actor: Actor): Promise<void>;
}
