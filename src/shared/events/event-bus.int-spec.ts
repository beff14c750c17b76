import { Injectable } from '@nestjs/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createTestKernel, type TestKernel } from '../../../test/support/test-kernel.js';
import { Sql } from '../persistence/sql.js';
import { AppEvent, AppEventBatch } from './app-event.js';
import { OnAppEvent } from './on-app-event.decorator.js';

class ProbeHappened extends AppEvent {
  readonly name = 'probe.happened';
  constructor(readonly label: string) {
    super();
  }
}

abstract class Ping extends AppEvent {}
class Pinged extends Ping {
  readonly name = 'probe.pinged';
  constructor(readonly n: number) {
    super();
  }
}
class Ponged extends Ping {
  readonly name = 'probe.ponged';
}
class PingBatch extends AppEventBatch<Ping> {
  static override readonly holds = Ping;
  readonly name = 'probe.batch';
}

/** Handlers of a batch's events, of the batch, and of both shapes: what each got, in order. */
@Injectable()
class ShapeHandlers {
  readonly got: string[] = [];

  @OnAppEvent(Pinged, { phase: 'in-tx' })
  onePing(event: Pinged): void {
    this.got.push(`ping ${event.n}`);
  }

  @OnAppEvent(PingBatch, { phase: 'after-commit' })
  wholeBatch(batch: PingBatch): void {
    this.got.push(`batch of ${batch.events.length}`);
  }

  @OnAppEvent([Pinged, PingBatch], { phase: 'in-tx', ridesStatement: true })
  either(event: Pinged | PingBatch): void {
    this.got.push(event instanceof PingBatch ? `either: batch of ${event.events.length}` : `either: ping ${event.n}`);
  }
}

/** A module's handlers, found by the bus at start-up like any provider's. */
@Injectable()
class ProbeHandlers {
  readonly afterCommit: string[] = [];
  constructor(private readonly sql: Sql) {}

  @OnAppEvent(ProbeHappened, { phase: 'in-tx' })
  async record(event: ProbeHappened): Promise<void> {
    await this.sql.run(`INSERT INTO public.bus_probe (label) VALUES ($1)`, [event.label]);
    if (event.label.startsWith('fail')) throw new Error('in-tx handler failed');
  }

  @OnAppEvent(ProbeHappened, { phase: 'after-commit' })
  notify(event: ProbeHappened): void {
    this.afterCommit.push(event.label);
  }
}

/** EventBus on a real database: in-tx handlers share the publisher's fate; after-commit ones wait for the commit. */
describe('EventBus', () => {
  let k: TestKernel;
  let handlers: ProbeHandlers;
  let shapes: ShapeHandlers;

  beforeAll(async () => {
    k = await createTestKernel([ProbeHandlers, ShapeHandlers]);
    handlers = k.module.get(ProbeHandlers);
    shapes = k.module.get(ShapeHandlers);
    await k.sql.run(`CREATE TABLE public.bus_probe (label text PRIMARY KEY)`);
  });
  afterAll(() => k.close());
  beforeEach(async () => {
    await k.sql.run(`TRUNCATE public.bus_probe`);
    handlers.afterCommit.length = 0;
    shapes.got.length = 0;
  });

  const labels = async () => (await k.sql.rows<{ label: string }>(`SELECT label FROM public.bus_probe ORDER BY label`)).map((r) => r.label);

  it('runs in-tx handlers inside the publisher transaction, after-commit ones after the commit', async () => {
    await k.uow.run(async () => {
      await k.bus.publish(new ProbeHappened('ok'));
      expect(await labels()).toEqual(['ok']); // written by the handler, visible in this transaction
      expect(handlers.afterCommit).toEqual([]);
    });
    expect(await labels()).toEqual(['ok']);
    expect(handlers.afterCommit).toEqual(['ok']);
  });

  it('rolls the whole use case back when an in-tx handler fails, and drops the after-commit work', async () => {
    await expect(
      k.uow.run(async () => {
        await k.bus.publish(new ProbeHappened('fine'));
        await k.sql.run(`INSERT INTO public.bus_probe (label) VALUES ('the change itself')`);
        await k.bus.publish(new ProbeHappened('fail-1'));
      }),
    ).rejects.toThrow('in-tx handler failed');
    expect(await labels()).toEqual([]);
    expect(handlers.afterCommit).toEqual([]);
  });

  it('refuses to publish outside a unit of work', async () => {
    await expect(k.bus.publish(new ProbeHappened('loose'))).rejects.toThrow(/outside a unit of work/);
    expect(await labels()).toEqual([]);
    expect(handlers.afterCommit).toEqual([]);
  });

  it('gives a handler of an event class the events of that class inside a batch, and a handler of the batch the batch, each once', async () => {
    await k.uow.run(() => k.bus.publish(new PingBatch([new Pinged(1), new Ponged(), new Pinged(2)])));
    expect(shapes.got).toEqual(['ping 1', 'ping 2', 'either: batch of 3', 'batch of 3']);
    shapes.got.length = 0;
    await k.uow.run(() => k.bus.publish(new Pinged(3)));
    expect(shapes.got).toEqual(['ping 3', 'either: ping 3']);
  });

  it('makes a one-statement unit publishing a batch a transaction when an in-tx handler of the events it holds needs one', async () => {
    // ShapeHandlers.onePing (in-tx, Pinged) needs a transaction; PingBatch holds Pings, Pinged among them.
    const inTransaction = await k.uow.runStatement(async () => {
      await k.bus.publish(new PingBatch([new Pinged(4)]));
      return k.uow.inTransaction;
    }, [PingBatch]);
    expect(inTransaction).toBe(true);
    expect(shapes.got).toEqual(['ping 4', 'either: batch of 1', 'batch of 1']);
  });
});
