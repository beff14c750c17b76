/** An immutable fact published on the in-process bus. Never carries an entity. */
export abstract class AppEvent {
  /** The event's name, e.g. `card.created`; also the stream entry's action. */
  abstract readonly name: string;
  readonly occurredAt = new Date();
}

export type EventPhase = 'in-tx' | 'after-commit';
