import { AppEvent } from './app-event.js';

export class ProjectCreated extends AppEvent {
  readonly name = 'workspace.project.created';
  constructor(
    readonly projectId: number,
    readonly organizationId: number,
    readonly topLevelCardId: number,
    readonly actorId: number,
  ) {
    super();
  }
}

export class ProjectDeleted extends AppEvent {
  readonly name = 'workspace.project.deleted';
  constructor(
    readonly projectId: number,
    readonly organizationId: number,
    readonly actorId: number,
  ) {
    super();
  }
}
