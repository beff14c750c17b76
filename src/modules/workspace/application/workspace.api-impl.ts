import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import {
  WorkspaceApi,
  type AccessMode,
  type OrganizationAccess,
  type NewProject,
  type ProjectAccess,
  type ProjectView,
  type Role,
} from '../contracts/workspace.api.js';
import { roleAllows, ROLES } from '../domain/membership.entity.js';
import { WorkspaceRepository } from '../infrastructure/workspace.repository.js';
import { ProjectsService } from './projects.service.js';
import { WorkspaceAccess } from './workspace-access.service.js';

@Injectable()
export class WorkspaceApiImpl extends WorkspaceApi {
  constructor(
    private readonly access: WorkspaceAccess,
    private readonly repo: WorkspaceRepository,
    private readonly projects: ProjectsService,
  ) {
    super();
  }

  requireOrganization(organizationId: number, actor: Actor, mode: AccessMode): Promise<OrganizationAccess> {
    return this.access.organization(organizationId, actor, mode);
  }

  memberRoleSql(organizationIdSql: string, userIdParam: string): string {
    return `(SELECT m.role FROM workspace.memberships m WHERE m.organization_id = ${organizationIdSql} AND m.user_id = ${userIdParam})`;
  }

  memberAllowsSql(organizationIdSql: string, userIdParam: string, mode: AccessMode): string {
    const allowed = ROLES.filter((role) => roleAllows(role, mode)).map((role) => `'${role}'`);
    return `${this.memberRoleSql(organizationIdSql, userIdParam)} IN (${allowed.join(', ')})`;
  }

  accessFromRole(organizationId: number, role: Role | null, mode: AccessMode): OrganizationAccess {
    return this.access.fromRole(organizationId, role, mode);
  }

  projectRoleSql(projectIdSql: string, userIdParam: string): string {
    return `(SELECT m.role FROM workspace.projects p JOIN workspace.memberships m ON m.organization_id = p.organization_id
              WHERE p.id = ${projectIdSql} AND m.user_id = ${userIdParam})`;
  }

  projectAccessFromRole(role: Role | null, mode: AccessMode): Role {
    return this.access.projectFromRole(role, mode);
  }

  async requireProject(projectId: number, actor: Actor, mode: AccessMode): Promise<ProjectAccess> {
    const { project: _project, ...access } = await this.access.project(projectId, actor, mode);
    return access;
  }

  membersAmong(organizationId: number, userIds: number[]): Promise<number[]> {
    return this.repo.membersAmong(organizationId, userIds);
  }

  async memberIds(organizationId: number): Promise<number[]> {
    return (await this.repo.members(organizationId)).map((m) => Number(m.userId));
  }

  visibleProjectIds(actor: Actor): Promise<number[]> {
    return this.repo.visibleProjectIds(actor.userId);
  }

  createProject(organizationId: number, title: string, actor: Actor): Promise<NewProject> {
    return this.projects.createProject(organizationId, title, actor);
  }

  attachTopLevelCard(projectId: number, topLevelCardId: number): Promise<ProjectView> {
    return this.projects.attachTopLevelCard(projectId, topLevelCardId);
  }

  prepareProjectDeletion(projectId: number, actor: Actor): Promise<ProjectAccess> {
    return this.projects.prepareDeletion(projectId, actor);
  }

  finishProjectDeletion(project: ProjectAccess, actor: Actor): Promise<void> {
    return this.projects.finishDeletion(project, actor);
  }
}
