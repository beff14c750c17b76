import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { AccessMode, OrganizationAccess, ProjectAccess, Role } from '../contracts/workspace.api.js';
import { roleAllows } from '../domain/membership.entity.js';
import type { Project } from '../domain/project.entity.js';
import { OrganizationNotFoundError, ProjectNotFoundError, RoleTooWeakError } from '../domain/workspace.errors.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { WorkspaceRepository } from '../infrastructure/workspace.repository.js';

/** Who may see and change what: 404 outside the team, 403 for a role too weak. */
@Injectable()
export class WorkspaceAccess {
  constructor(
    private readonly repo: WorkspaceRepository,
    private readonly uow: UnitOfWork,
  ) {}

  /**
   * A write in a transaction (a project's creation, an import into a new
   * project) holds the caller's membership row until it commits, as
   * `project` does: a removal or a demotion to viewer waits for it, and one
   * that committed first refuses it. Not the admin mode: membership changes
   * lock the admin rows FOR UPDATE later in their transaction, and two of
   * them by one admin, each holding that admin's row FOR SHARE, would
   * deadlock on the upgrade.
   */
  async organization(organizationId: number, actor: Actor, mode: AccessMode): Promise<OrganizationAccess> {
    const role =
      mode === 'write' && this.uow.inTransaction
        ? await this.repo.heldRole(organizationId, actor.userId)
        : ((await this.repo.membership(organizationId, actor.userId))?.role ?? null);
    return this.fromRole(organizationId, role, mode);
  }

  /** 404 outside the team (null role), 403 for a role too weak. */
  fromRole(organizationId: number, role: Role | null, mode: AccessMode): OrganizationAccess {
    if (!role) throw new OrganizationNotFoundError();
    if (!roleAllows(role, mode)) throw new RoleTooWeakError(mode);
    return { organizationId, role };
  }

  /** 404 (the project's) for a null role, 403 for a role too weak. */
  projectFromRole(role: Role | null, mode: AccessMode): Role {
    if (!role) throw new ProjectNotFoundError();
    if (!roleAllows(role, mode)) throw new RoleTooWeakError(mode);
    return role;
  }

  async project(projectId: number, actor: Actor, mode: AccessMode): Promise<ProjectAccess & { project: Project }> {
    // A write holds the project row until it commits, so a concurrent project
    // deletion either waits for it (and then drops what it added) or has
    // already happened (and the write finds no project: 404). Without this, a
    // field created during a deletion outlived its project (issue 13). It
    // holds the caller's membership row too: a removal or a demotion to
    // viewer waits for the write, or committed first and the write is refused
    // (an import committed 100 000 cards after its author's removal answered).
    const found = await this.repo.projectWithMembership(projectId, actor.userId, mode !== 'read' && this.uow.inTransaction);
    if (!found) throw new ProjectNotFoundError();
    if (!roleAllows(found.role, mode)) throw new RoleTooWeakError(mode);
    return {
      project: found.project,
      projectId: Number(found.project.id),
      organizationId: Number(found.project.organizationId),
      topLevelCardId: Number(found.project.topLevelCardId),
      role: found.role,
    };
  }
}
