import { SetMetadata } from '@nestjs/common';
import type { EventClass, EventPhase } from './app-event.js';

export const ON_APP_EVENT = 'cardwork:on-app-event';

export interface OnAppEventOptions {
  phase: EventPhase;
  /**
   * in-tx only: the handler sends no statement for what a one-statement unit
   * (`UnitOfWork.runStatement`) publishes, which is only events its statement
   * recorded along, so that unit needs no transaction opened for it. Only the
   * stream recorder is such a handler; any other in-tx handler of what a
   * one-statement unit publishes makes that unit a transaction (`run`).
   */
  ridesStatement?: boolean;
}

export interface OnAppEventMeta extends OnAppEventOptions {
  events: EventClass[];
}

/**
 * Marks a provider method as a handler of one or more event classes (a
 * subclass matches its base). The method gets each event once: as published
 * when it names the event's class (or a base of it); for a batch
 * (`AppEventBatch`) it does not name, each of the batch's events it names, one
 * call per event. A method naming both a batch class and its events' class
 * gets batches whole and single events as they are.
 * `in-tx` handlers run inside the publisher's transaction (always one: see
 * `ridesStatement`) and roll it back by throwing; they must not publish
 * (STYLE.md §3). `after-commit` handlers run once the outermost transaction
 * has committed; their errors are logged.
 */
export function OnAppEvent(events: EventClass | EventClass[], options: OnAppEventOptions): MethodDecorator {
  const meta: OnAppEventMeta = { ...options, events: Array.isArray(events) ? events : [events] };
  return SetMetadata(ON_APP_EVENT, meta);
}
