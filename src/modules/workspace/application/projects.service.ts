import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { ProjectDeleted } from '../../../shared/events/workspace.events.js';
import type { Page, PageRequest } from '../../../shared/http/pagination.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { NewProject, ProjectAccess, ProjectView } from '../contracts/workspace.api.js';
import { Project } from '../domain/project.entity.js';
import { WorkspaceRepository } from '../infrastructure/workspace.repository.js';
import { WorkspaceAccess } from './workspace-access.service.js';
import { toProjectView } from './workspace.views.js';

@Injectable()
export class ProjectsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly repo: WorkspaceRepository,
    private readonly access: WorkspaceAccess,
    private readonly events: EventBus,
  ) {}

  async list(organizationId: number, actor: Actor, page: PageRequest): Promise<Page<ProjectView>> {
    await this.access.organization(organizationId, actor, 'read');
    const { items, total } = await this.repo.projectsOf(organizationId, page);
    return { items: items.map(toProjectView), total };
  }

  /** GET /projects/all: the projects of every team the caller belongs to. */
  async listVisible(actor: Actor, page: PageRequest): Promise<Page<ProjectView>> {
    const { items, total } = await this.repo.projectsVisibleTo(actor.userId, page);
    return { items: items.map(toProjectView), total };
  }

  /** The project row; `cards` creates the top-level card in the same transaction and attaches it. */
  createProject(organizationId: number, title: string, actor: Actor): Promise<NewProject> {
    return this.uow.run(async () => {
      await this.access.organization(organizationId, actor, 'write');
      const project = Object.assign(new Project(), { organizationId, title, createdBy: actor.userId, topLevelCardId: null });
      const saved = await this.repo.saveProject(project);
      return { projectId: Number(saved.id), organizationId, title };
    });
  }

  /** The last step of project creation: the link to the top-level card (workspace owns it). */
  attachTopLevelCard(projectId: number, topLevelCardId: number): Promise<ProjectView> {
    return this.uow.run(async () => {
      await this.repo.setTopLevelCard(projectId, topLevelCardId);
      return toProjectView((await this.repo.findProject(projectId))!);
    });
  }

  async get(projectId: number, actor: Actor): Promise<ProjectView> {
    const { project } = await this.access.project(projectId, actor, 'read');
    return toProjectView(project);
  }

  /**
   * First step of a project's deletion (in the caller's unit of work, which
   * `cards` composes): the project row FOR UPDATE before anything else
   * (writes holding it, KEY SHARE, finish first; later ones find no
   * project), then the caller's role, team admins only.
   */
  async prepareDeletion(projectId: number, actor: Actor): Promise<ProjectAccess> {
    await this.repo.lockProjectForDeletion(projectId);
    const { project: _project, ...access } = await this.access.project(projectId, actor, 'admin');
    // The cascades take as long as the project is big (its cards, values,
    // memberships and stream, with no cap): a statement timeout would make a
    // big project impossible to delete. Team admins only, one at a time (the row lock).
    await this.uow.liftStatementTimeout();
    return access;
  }

  /** Last step: other modules drop the project's data in-transaction on ProjectDeleted, then the row goes. */
  async finishDeletion(project: ProjectAccess, actor: Actor): Promise<void> {
    await this.events.publish(new ProjectDeleted(project.projectId, project.organizationId, actor.userId));
    await this.repo.deleteProject(project.projectId);
  }
}
