import { Injectable } from '@nestjs/common';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../shared/events/workspace.events.js';
import { CardTreeRepository } from '../infrastructure/card-tree.repository.js';

/** Removes a deleted project's cards (streams cascade) and counters, in the deleting transaction. */
@Injectable()
export class CardTreeProjectDeletedHandler {
  constructor(private readonly cards: CardTreeRepository) {}

  @OnAppEvent(ProjectDeleted, { phase: 'in-tx' })
  async onProjectDeleted(event: ProjectDeleted): Promise<void> {
    await this.cards.deleteProject(event.projectId);
  }
}
