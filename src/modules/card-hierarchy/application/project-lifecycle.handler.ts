import { Injectable, OnModuleInit } from '@nestjs/common';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../shared/events/workspace.events.js';
import { WorkspaceApi } from '../../workspace/index.js';
import { CardTreeRepository } from '../infrastructure/card-tree.repository.js';
import { CardsService } from './cards.service.js';

/** Makes and removes the cards of a project as workspace creates and deletes projects. */
@Injectable()
export class ProjectLifecycleHandler implements OnModuleInit {
  constructor(
    private readonly workspace: WorkspaceApi,
    private readonly cardsService: CardsService,
    private readonly cards: CardTreeRepository,
  ) {}

  onModuleInit(): void {
    this.workspace.registerRootCardProvisioner((r) =>
      this.cardsService.createRoot(r.projectId, r.organizationId, r.title, r.actorId),
    );
  }

  @OnAppEvent(ProjectDeleted, { phase: 'in-tx' })
  async onProjectDeleted(event: ProjectDeleted): Promise<void> {
    await this.cards.deleteProject(event.projectId);
  }
}
