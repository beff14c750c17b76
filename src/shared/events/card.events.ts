import { AppEvent } from './app-event.js';

/**
 * Catalogue of card events (DESIGN.md §9). They live in the shared kernel so
 * the stream writer can record every module's events without depending on
 * those modules.
 */
export interface CardEventProps {
  cardId: number;
  projectId: number;
  /** null for work the system does on its own. */
  actorId: number | null;
  /** Only as much before/after data as the stream entry needs. */
  data?: Record<string, unknown>;
  /** System work (imports) is recorded as `log`, user actions as `activity`. */
  system?: boolean;
}

export abstract class CardEvent extends AppEvent {
  readonly cardId: number;
  readonly projectId: number;
  readonly actorId: number | null;
  readonly data: Record<string, unknown>;
  readonly system: boolean;

  constructor(props: CardEventProps) {
    super();
    this.cardId = props.cardId;
    this.projectId = props.projectId;
    this.actorId = props.actorId;
    this.data = props.data ?? {};
    this.system = props.system ?? false;
  }
}

export class CardCreated extends CardEvent {
  readonly name = 'card.created';
}
export class CardUpdated extends CardEvent {
  readonly name = 'card.updated';
}
export class CardStateChanged extends CardEvent {
  readonly name = 'card.state_changed';
}
export class CardMoved extends CardEvent {
  readonly name = 'card.moved';
}
export class CardArchived extends CardEvent {
  readonly name = 'card.archived';
}
export class CardRestored extends CardEvent {
  readonly name = 'card.restored';
}
/** Published before the subtree goes; `cardId` is the parent that keeps the entry. */
export class CardDeleted extends CardEvent {
  readonly name = 'card.deleted';
}
export class CardAttributeChanged extends CardEvent {
  readonly name = 'card.attribute_changed';
}
export class CardGroupChanged extends CardEvent {
  readonly name = 'card.group_changed';
}
export class CardModelChanged extends CardEvent {
  readonly name = 'card.model_changed';
}
/** A comment: recorded as a stream entry of kind `comment`; `data.content` holds its text. */
export class CommentAdded extends CardEvent {
  readonly name = 'comment.added';
}
export class ImportCompleted extends CardEvent {
  readonly name = 'import.completed';
}
