/**
 * An immutable fact published on the in-process bus. Never carries an entity.
 * Only `CardEvent`s become entries of the card stream (the stream recorder
 * records every one of them); any other event is seen by its handlers only.
 */
export abstract class AppEvent {
  /** The event's name, e.g. `card.created`; for a `CardEvent`, also its stream entry's action. */
  abstract readonly name: string;
  readonly occurredAt = new Date();
}

export type EventPhase = 'in-tx' | 'after-commit';

/** An event class, as handlers name it (an abstract base names all its subclasses). */
export type EventClass = abstract new (...args: never[]) => AppEvent;

/**
 * Many events of one piece of work published at once (one bulk write). The
 * bus gives a handler of the batch's class the batch whole, and a handler of
 * an event class that does not take the batch each of its events of that
 * class, one by one: a handler sees an event once, whichever shape it came in.
 */
export abstract class AppEventBatch<E extends AppEvent = AppEvent> extends AppEvent {
  /**
   * The class of the events a batch of this class holds, which the bus reads
   * before any is published (`UnitOfWork.runStatement`): a subclass names its own.
   */
  static readonly holds: EventClass = AppEvent;

  constructor(readonly events: readonly E[]) {
    super();
  }
}
