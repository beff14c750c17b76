import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventBus } from '../../../src/shared/events/event-bus.js';
import { AppEvent } from '../../../src/shared/events/app-event.js';
import { UnitOfWork } from '../../../src/shared/persistence/unit-of-work.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

class Probe extends AppEvent {
  readonly name = 'test.probe';
  constructor(readonly label: string) {
    super();
  }
}

// The shared kernel on a real database: transaction boundaries, nesting,
// retries, and the two phases of the event bus.
describe('unit of work and event bus', () => {
  let t: TestApp;
  let uow: UnitOfWork;
  let bus: EventBus;
  const seen: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    uow = t.app.get(UnitOfWork);
    bus = t.app.get(EventBus);
    await uow.manager.query('CREATE TABLE IF NOT EXISTS public.probe_rows (label text PRIMARY KEY)');
    bus.subscribe(Probe, 'in-tx', async (e) => {
      const label = (e as Probe).label;
      await uow.manager.query('INSERT INTO public.probe_rows (label) VALUES ($1)', [label]);
      if (label.startsWith('fail')) throw new Error('in-tx handler failed');
    });
    bus.subscribe(Probe, 'after-commit', (e) => {
      seen.push(`after:${(e as Probe).label}`);
      if ((e as Probe).label === 'after-throws') throw new Error('ignored');
    });
  });
  afterAll(() => t.close());

  const labels = async () =>
    ((await uow.manager.query('SELECT label FROM public.probe_rows ORDER BY label')) as { label: string }[]).map((r) => r.label);

  it('runs in-tx handlers in the publisher transaction and after-commit ones after the commit', async () => {
    await uow.run(async () => {
      await bus.publish(new Probe('ok'));
      expect(seen).not.toContain('after:ok');
    });
    expect(await labels()).toContain('ok');
    expect(seen).toContain('after:ok');
  });

  it('rolls the whole use case back when an in-tx handler throws, and drops after-commit work', async () => {
    await expect(
      uow.run(async () => {
        await uow.manager.query(`INSERT INTO public.probe_rows (label) VALUES ('before-fail')`);
        await bus.publish(new Probe('fail-1'));
      }),
    ).rejects.toThrow('in-tx handler failed');
    expect(await labels()).not.toContain('before-fail');
    expect(await labels()).not.toContain('fail-1');
    expect(seen).not.toContain('after:fail-1');
  });

  it('joins the outer transaction from a nested run', async () => {
    await expect(
      uow.run(async () => {
        await uow.run(() => bus.publish(new Probe('nested')));
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await labels()).not.toContain('nested');
  });

  it('logs and swallows after-commit errors: the change stays committed', async () => {
    await uow.run(() => bus.publish(new Probe('after-throws')));
    expect(await labels()).toContain('after-throws');
  });

  it('retries a serialization failure', async () => {
    let attempts = 0;
    const result = await uow.run(async () => {
      attempts++;
      if (attempts === 1) {
        throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      }
      return 'done';
    });
    expect(result).toBe('done');
    expect(attempts).toBe(2);
  });
});
