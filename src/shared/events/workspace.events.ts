import { AppEvent } from './app-event.js';

/**
 * A project is being deleted (published before its row goes, in the deleting
 * transaction): each module drops the project's rows in an in-tx handler.
 */
export class ProjectDeleted extends AppEvent {
  readonly name = 'project.deleted';
  constructor(
    readonly projectId: number,
    readonly organizationId: number,
    readonly actorId: number,
  ) {
    super();
  }
}
