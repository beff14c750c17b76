import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { UnitOfWork } from '../persistence/unit-of-work.js';
import type { AppEvent, EventPhase } from './app-event.js';
import { ON_APP_EVENT, type EventClass, type OnAppEventMeta } from './on-app-event.decorator.js';

type Handler = (event: AppEvent) => unknown;

interface Subscription {
  event: EventClass;
  phase: EventPhase;
  handler: Handler;
}

/**
 * The in-process event bus (STYLE.md §3). Publishing happens inside a unit of
 * work, always: in-tx handlers run now, in the publisher's transaction;
 * after-commit handlers are queued on the unit of work.
 */
@Injectable()
export class EventBus implements OnApplicationBootstrap {
  private readonly subscriptions: Subscription[] = [];
  private readonly logger = new Logger(EventBus.name);

  constructor(
    private readonly uow: UnitOfWork,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || wrapper.isNotMetatype) continue;
      const proto = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(proto)) {
        const fn = instance[method] as Handler;
        const meta = this.reflector.get<OnAppEventMeta | undefined>(ON_APP_EVENT, fn);
        if (!meta) continue;
        for (const event of meta.events) this.subscribe(event, meta.phase, fn.bind(instance));
      }
    }
  }

  subscribe(event: EventClass, phase: EventPhase, handler: Handler): void {
    this.subscriptions.push({ event, phase, handler });
  }

  /**
   * Publishes inside the current unit of work. Outside one it throws: a change
   * and its events (stream entries) commit together or not at all, so an event
   * published after the change committed would be a bug, not a quiet
   * transaction of its own. In a one-statement unit (`runStatement`) the
   * in-tx handlers run after the statement, and a handler that writes fails
   * there: such a unit publishes only events its statement recorded along.
   */
  async publish(...events: AppEvent[]): Promise<void> {
    if (!this.uow.inUnit) {
      throw new Error(`EventBus.publish(${events.map((e) => e.name).join(', ')}) outside a unit of work`);
    }
    for (const event of events) await this.dispatch(event);
  }

  private async dispatch(event: AppEvent): Promise<void> {
    for (const sub of this.subscriptions) {
      if (!(event instanceof sub.event)) continue;
      if (sub.phase === 'in-tx') {
        await sub.handler(event);
      } else {
        this.uow.afterCommit(async () => {
          try {
            await sub.handler(event);
          } catch (error) {
            this.logger.error(`after-commit handler for ${event.name} failed: ${String(error)}`);
          }
        });
      }
    }
  }
}
