import { Injectable } from '@nestjs/common';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../shared/events/workspace.events.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';

/** Drops a deleted project's group types (their groups and memberships cascade) in the deleting transaction. */
@Injectable()
export class GroupingProjectDeletedHandler {
  constructor(private readonly types: GroupTypesRepository) {}

  @OnAppEvent(ProjectDeleted, { phase: 'in-tx' })
  async onProjectDeleted(event: ProjectDeleted): Promise<void> {
    await this.types.deleteProject(event.projectId);
  }
}
