import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { WorkspaceApi, type ProjectView } from '../../workspace/index.js';

/** POST /organizations/{id}/projects: the project row (workspace) and its top-level card (card-hierarchy). */
@Injectable()
export class CreateProjectService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly workspace: WorkspaceApi,
    private readonly hierarchy: CardHierarchyApi,
  ) {}

  create(organizationId: number, title: string, actor: Actor): Promise<ProjectView> {
    return this.uow.run(async () => {
      const project = await this.workspace.createProject(organizationId, title, actor);
      const topLevelCardId = await this.hierarchy.createTopLevelCard(project, actor.userId);
      return this.workspace.attachTopLevelCard(project.projectId, topLevelCardId);
    });
  }
}
