import { AppEvent, AppEventBatch } from './app-event.js';

/**
 * Catalogue of card events (DESIGN.md §9) and their payloads. They live in the
 * shared kernel so the stream writer can record every module's events without
 * depending on those modules. An event's name is also the `action` of the
 * stream entry it becomes, and its payload the entry's `data`: this map is
 * the type of that column (STYLE.md §3 `CardActivityData`).
 */
export interface CardEventMap {
  'card.created': { title: string; ref: number; parent_id?: number };
  'card.updated': { title: { from: string; to: string } };
  'card.state_changed': { from: string; to: string };
  /** `to_position`: where the card ended among its (new) siblings, the requested position clamped. */
  'card.moved': { from_parent_id: number | null; to_parent_id: number; from_position: number; to_position: number };
  'card.archived': Record<string, never>;
  'card.restored': Record<string, never>;
  /** On the parent's stream (the deleted card's goes with it). */
  'card.deleted': { card_id: number; ref: number; title: string; subtree_size: number };
  'card.attribute_changed': {
    attribute_id: number;
    attribute: string;
    type: string;
    operation: 'set' | 'append' | 'pop';
    from: unknown;
    to: unknown;
    /** Why values went without a request naming this card: target_deleted (the cards a relationship named were deleted). */
    reason?: 'target_deleted';
  };
  'card.group_changed': {
    change: 'added' | 'removed' | 'reordered';
    group_id: number;
    group_title: string;
    type_id: number;
    type_name: string;
    /** Place in the group's column after the change (added, reordered). */
    position?: number;
    /** Place before it (removed, reordered). */
    from_position?: number;
    /** Why a membership went without a request naming it: group_deleted, group_type_deleted, moved_out_of_scope. */
    reason?: string;
  };
  'card.model_changed': { from: number | null; to: number | null; model: string | null };
  /** On the project's top-level card: what a spreadsheet import did. */
  'import.completed': {
    project_id: number;
    created: number;
    updated: number;
    skipped: number;
    children_created: number;
    discover_file_id: number;
    format: string;
  };
}

export type CardEventName = keyof CardEventMap;

/** The `data` of a stream entry of kind activity or log. */
export type CardActivityData = CardEventMap[CardEventName];

export interface CardEventProps<N extends CardEventName> {
  cardId: number;
  projectId: number;
  /** null for work the system does on its own. */
  actorId: number | null;
  /** Only as much before/after data as the stream entry needs. */
  data: CardEventMap[N];
  /** System work (imports) is recorded as `log`, user actions as `activity`. */
  system?: boolean;
}

/**
 * A change to a card; `data` is typed by the event's name. Every CardEvent is
 * an entry of the card stream: the stream recorder records each one published
 * (or, written along, skips it), so a subclass is a new kind of entry, with its
 * payload in `CardEventMap`. A fact that is not a stream entry (comments added,
 * which are entries of their own) extends `AppEvent` instead.
 */
export abstract class CardEvent<N extends CardEventName = CardEventName> extends AppEvent {
  abstract override readonly name: N;
  readonly cardId: number;
  readonly projectId: number;
  readonly actorId: number | null;
  readonly data: CardEventMap[N];
  readonly system: boolean;

  constructor(props: CardEventProps<N>) {
    super();
    this.cardId = props.cardId;
    this.projectId = props.projectId;
    this.actorId = props.actorId;
    this.data = props.data;
    this.system = props.system ?? false;
  }
}

export class CardCreated extends CardEvent<'card.created'> {
  readonly name = 'card.created';
}
export class CardUpdated extends CardEvent<'card.updated'> {
  readonly name = 'card.updated';
}
export class CardStateChanged extends CardEvent<'card.state_changed'> {
  readonly name = 'card.state_changed';
}
export class CardMoved extends CardEvent<'card.moved'> {
  readonly name = 'card.moved';
}
export class CardArchived extends CardEvent<'card.archived'> {
  readonly name = 'card.archived';
}
export class CardRestored extends CardEvent<'card.restored'> {
  readonly name = 'card.restored';
}
/** Published before the subtree goes; `cardId` is the parent that keeps the entry. */
export class CardDeleted extends CardEvent<'card.deleted'> {
  readonly name = 'card.deleted';
}
export class CardAttributeChanged extends CardEvent<'card.attribute_changed'> {
  readonly name = 'card.attribute_changed';
}
export class CardGroupChanged extends CardEvent<'card.group_changed'> {
  readonly name = 'card.group_changed';
}
export class CardModelChanged extends CardEvent<'card.model_changed'> {
  readonly name = 'card.model_changed';
}
export class ImportCompleted extends CardEvent<'import.completed'> {
  readonly name = 'import.completed';
}

/**
 * Many card events of one piece of bulk work (an import, a multi-card write)
 * published at once; the stream writer records them with one statement per
 * chunk instead of one per event. Each event keeps its own name, kind and
 * payload, and a handler of its class gets it from the batch (AppEventBatch).
 * `recordedAlong`: their entries were already written, with these payloads, by
 * the statement that made the change (SQL of the stream writer, "writing
 * along"); the stream writer does not record them again.
 */
export class CardEventBatch extends AppEventBatch<CardEvent> {
  static override readonly holds = CardEvent;
  readonly name = 'card.batch';
  constructor(
    events: readonly CardEvent[],
    readonly recordedAlong = false,
  ) {
    super(events);
  }
}
