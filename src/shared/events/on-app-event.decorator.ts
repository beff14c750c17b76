import { SetMetadata } from '@nestjs/common';
import type { AppEvent, EventPhase } from './app-event.js';

export const ON_APP_EVENT = 'cardwork:on-app-event';

export type EventClass = abstract new (...args: never[]) => AppEvent;

export interface OnAppEventMeta {
  events: EventClass[];
  phase: EventPhase;
}

/**
 * Marks a provider method as a handler of one or more event classes (a
 * subclass matches its base). `in-tx` handlers run inside the publisher's
 * transaction and roll it back by throwing; `after-commit` handlers run once
 * the outermost transaction has committed.
 */
export function OnAppEvent(events: EventClass | EventClass[], options: { phase: EventPhase }): MethodDecorator {
  const meta: OnAppEventMeta = { events: Array.isArray(events) ? events : [events], phase: options.phase };
  return SetMetadata(ON_APP_EVENT, meta);
}
