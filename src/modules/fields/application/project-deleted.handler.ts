import { Injectable } from '@nestjs/common';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../shared/events/workspace.events.js';
import { FieldDefinitionsRepository } from '../infrastructure/field-definitions.repository.js';

/**
 * Drops a project's field definitions and models when the project goes, in
 * its transaction; values go with them (cascade), file contents after commit
 * (FileBlobs).
 */
@Injectable()
export class FieldsProjectDeletedHandler {
  constructor(private readonly definitions: FieldDefinitionsRepository) {}

  @OnAppEvent(ProjectDeleted, { phase: 'in-tx' })
  async onProjectDeleted(event: ProjectDeleted): Promise<void> {
    await this.definitions.deleteProject(event.projectId);
  }
}
