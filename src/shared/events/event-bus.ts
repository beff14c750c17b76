import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { UnitOfWork, type PublishedClass } from '../persistence/unit-of-work.js';
import { AppEventBatch, type AppEvent, type EventClass, type EventPhase } from './app-event.js';
import { ON_APP_EVENT, type OnAppEventMeta } from './on-app-event.decorator.js';

type Handler = (event: AppEvent) => unknown;

interface Subscription {
  /** The classes one handler takes (one decorated method: it gets each event once). */
  events: EventClass[];
  phase: EventPhase;
  handler: Handler;
  /** See `OnAppEventOptions.ridesStatement`. */
  ridesStatement: boolean;
}

/**
 * The in-process event bus (STYLE.md §3). Publishing happens inside a unit of
 * work, always: in-tx handlers run now, in the publisher's transaction;
 * after-commit handlers are queued on the unit of work.
 */
@Injectable()
export class EventBus implements OnApplicationBootstrap {
  private readonly subscriptions: Subscription[] = [];
  /** Per class a one-statement unit declares, whether it needs a transaction (cleared on subscribe). */
  private readonly statementNeeds = new Map<PublishedClass, boolean>();
  private readonly logger = new Logger(EventBus.name);

  constructor(
    private readonly uow: UnitOfWork,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {
    uow.decideStatementUnits((publishes) => publishes.some((c) => this.needsTransaction(c)));
  }

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || wrapper.isNotMetatype) continue;
      const proto = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(proto)) {
        const fn = instance[method] as Handler;
        const meta = this.reflector.get<OnAppEventMeta | undefined>(ON_APP_EVENT, fn);
        if (meta) this.subscribe(meta.events, meta.phase, fn.bind(instance), { ridesStatement: meta.ridesStatement });
      }
    }
  }

  /** One handler of `events` (as one method decorated with `@OnAppEvent`). */
  subscribe(events: EventClass | EventClass[], phase: EventPhase, handler: Handler, options: { ridesStatement?: boolean } = {}): void {
    const ridesStatement = phase === 'in-tx' && options.ridesStatement === true;
    this.subscriptions.push({ events: Array.isArray(events) ? events : [events], phase, handler, ridesStatement });
    this.statementNeeds.clear();
  }

  /**
   * Publishes inside the current unit of work. Outside one it throws: a change
   * and its events (stream entries) commit together or not at all, so an event
   * published after the change committed would be a bug, not a quiet
   * transaction of its own. A one-statement unit (`runStatement`) is a
   * transaction whenever a handler of what it declared it publishes needs one;
   * an in-tx handler that would run after such a unit's statement committed
   * (an event it did not declare) makes this throw instead.
   */
  async publish(...events: AppEvent[]): Promise<void> {
    if (!this.uow.inUnit) {
      throw new Error(`EventBus.publish(${events.map((e) => e.name).join(', ')}) outside a unit of work`);
    }
    for (const event of events) await this.dispatch(event);
  }

  private async dispatch(event: AppEvent): Promise<void> {
    for (const sub of this.subscriptions) {
      const delivered = deliveries(sub, event);
      if (!delivered.length) continue;
      if (sub.phase === 'in-tx') {
        if (!sub.ridesStatement && !this.uow.inTransaction) {
          throw new Error(`${event.name} was published in a one-statement unit (runStatement) that did not declare it, and an in-tx handler needs a transaction`);
        }
        for (const e of delivered) await sub.handler(e);
      } else {
        // One hook for what this handler gets (a batch's thousand events are not a thousand hooks).
        this.uow.afterCommit(() => this.afterCommit(sub, delivered));
      }
    }
  }

  private async afterCommit(sub: Subscription, delivered: readonly AppEvent[]): Promise<void> {
    for (const event of delivered) {
      try {
        await sub.handler(event);
      } catch (error) {
        this.logger.error(`after-commit handler for ${event.name} failed: ${String(error)}`);
      }
    }
  }

  /**
   * Whether an in-tx handler that cannot ride a one-statement unit may get
   * an event of `published` (a subclass of it, or a base it takes), or, for
   * a batch class, one of the events such a batch holds.
   */
  private needsTransaction(published: PublishedClass): boolean {
    let needs = this.statementNeeds.get(published);
    if (needs === undefined) {
      const reached = [published, ...(isBatchClass(published) ? [published.holds] : [])];
      needs = this.subscriptions.some(
        (sub) => sub.phase === 'in-tx' && !sub.ridesStatement && sub.events.some((taken) => reached.some((c) => related(taken, c))),
      );
      this.statementNeeds.set(published, needs);
    }
    return needs;
  }
}

/**
 * What a handler gets of a published event: the event when it takes its
 * class; else, of a batch, each event it takes. A batch whose class holds
 * events no class of the handler is related to is not walked (an import's
 * batch of thousands, for each handler of other events).
 */
function deliveries(sub: Subscription, event: AppEvent): readonly AppEvent[] {
  const takes = (e: AppEvent) => sub.events.some((c) => e instanceof c);
  if (takes(event)) return [event];
  if (!(event instanceof AppEventBatch)) return [];
  const held = (event.constructor as typeof AppEventBatch).holds;
  return sub.events.some((c) => related(c, held)) ? event.events.filter(takes) : [];
}

function isBatchClass(c: PublishedClass): c is typeof AppEventBatch {
  return c === AppEventBatch || c.prototype instanceof AppEventBatch;
}

/** One class is the other or a subclass of it. */
function related(a: PublishedClass, b: PublishedClass): boolean {
  return a === b || a.prototype instanceof b || b.prototype instanceof a;
}
