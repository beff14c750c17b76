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

export interface RootCardRequest {
  projectId: number;
  organizationId: number;
  title: string;
  actorId: number;
}

/** Creates a project's top-level card in the caller's transaction and returns its id. */
export type RootCardProvisioner = (request: RootCardRequest) => Promise<number>;

/** Public API of the workspace module: teams, membership and projects. */
export abstract class WorkspaceApi {
  /** The caller's access to a team: 404 when not a member, 403 when the role is too weak. */
  abstract requireOrganization(organizationId: number, actor: Actor, mode: AccessMode): Promise<OrganizationAccess>;
  /** The caller's access to a project, with the same rules as its team. */
  abstract requireProject(projectId: number, actor: Actor, mode: AccessMode): Promise<ProjectAccess>;
  /** Ids of the team's members among `userIds`. */
  abstract membersAmong(organizationId: number, userIds: number[]): Promise<number[]>;
  /** All member ids of a team. */
  abstract memberIds(organizationId: number): Promise<number[]>;
  /**
   * Card-hierarchy owns the card table, so it registers how a project's
   * top-level card is made; workspace calls it inside project creation.
   * (Registration keeps the dependency pointing from card-hierarchy to workspace.)
   */
  abstract registerRootCardProvisioner(provisioner: RootCardProvisioner): void;
}
