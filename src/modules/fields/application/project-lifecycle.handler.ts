import { Injectable } from '@nestjs/common';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../shared/events/workspace.events.js';
import { FieldDefinitionsRepository } from '../infrastructure/field-definitions.repository.js';
import { FieldValuesRepository } from '../infrastructure/field-values.repository.js';
import { FileBlobs } from './file-blobs.service.js';

/** Drops a project's field definitions and models (their values go with them) when the project goes. */
@Injectable()
export class FieldsProjectLifecycleHandler {
  constructor(
    private readonly definitions: FieldDefinitionsRepository,
    private readonly values: FieldValuesRepository,
    private readonly blobs: FileBlobs,
  ) {}

  @OnAppEvent(ProjectDeleted, { phase: 'in-tx' })
  async onProjectDeleted(event: ProjectDeleted): Promise<void> {
    this.blobs.deleteAfterCommit(await this.values.fileKeysOfProject(event.projectId));
    await this.definitions.deleteProject(event.projectId);
  }
}
