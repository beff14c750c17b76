import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { ProjectCreated, ProjectDeleted } from '../../../shared/events/workspace.events.js';
import type { Page, PageRequest } from '../../../shared/http/pagination.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { RootCardProvisioner } from '../contracts/workspace.api.js';
import { Project } from '../domain/project.entity.js';
import { WorkspaceRepository } from '../infrastructure/workspace.repository.js';
import { WorkspaceAccess } from './workspace-access.service.js';
import { toProjectView, type ProjectView } from './workspace.views.js';

@Injectable()
export class ProjectsService {
  private provisioner: RootCardProvisioner | undefined;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly repo: WorkspaceRepository,
    private readonly access: WorkspaceAccess,
    private readonly events: EventBus,
  ) {}

  useRootCardProvisioner(provisioner: RootCardProvisioner): void {
    this.provisioner = provisioner;
  }

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

  /** The project and its top-level card are created in one transaction. */
  create(organizationId: number, actor: Actor, title: string): Promise<ProjectView> {
    return this.uow.run(async () => {
      await this.access.organization(organizationId, actor, 'write');
      if (!this.provisioner) throw new Error('no root card provisioner registered');
      const project = Object.assign(new Project(), { organizationId, title, createdBy: actor.userId, topLevelCardId: null });
      const saved = await this.repo.saveProject(project);
      const projectId = Number(saved.id);
      saved.topLevelCardId = await this.provisioner({ projectId, organizationId, title, actorId: actor.userId });
      await this.repo.setTopLevelCard(projectId, saved.topLevelCardId);
      await this.events.publish(new ProjectCreated(projectId, organizationId, saved.topLevelCardId, actor.userId));
      return toProjectView(saved);
    });
  }

  async get(projectId: number, actor: Actor): Promise<ProjectView> {
    const { project } = await this.access.project(projectId, actor, 'read');
    return toProjectView(project);
  }

  /** Team admins only. Other modules drop the project's data in-transaction on ProjectDeleted. */
  delete(projectId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const { organizationId } = await this.access.project(projectId, actor, 'admin');
      await this.events.publish(new ProjectDeleted(projectId, organizationId, actor.userId));
      await this.repo.deleteProject(projectId);
    });
  }
}
