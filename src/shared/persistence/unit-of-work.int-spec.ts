import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestKernel, type TestKernel } from '../../../test/support/test-kernel.js';
import { AppEvent } from '../events/app-event.js';
import type { Sql } from './sql.js';
import type { UnitOfWork } from './unit-of-work.js';
import { UPKEEP_MARK } from '../../database/embedded-upkeep.js';

/** Events of the runStatement tests, one class per test (a kernel's subscriptions last). */
class Alone extends AppEvent {
  readonly name = 'probe.alone';
}
class Ridden extends AppEvent {
  readonly name = 'probe.ridden';
}
class Guarded extends AppEvent {
  readonly name = 'probe.guarded';
}
class Undeclared extends AppEvent {
  readonly name = 'probe.undeclared';
}

/**
 * UnitOfWork on a real database: nesting joins the outer transaction, the
 * outermost run retries serialization failures (40001) and deadlocks (40P01),
 * and after-commit work is dropped on rollback (after-rollback work runs).
 */
describe('UnitOfWork', () => {
  let k: TestKernel;
  let uow: UnitOfWork;
  let sql: Sql;

  beforeAll(async () => {
    k = await createTestKernel();
    ({ uow, sql } = k);
    await sql.run(`CREATE TABLE public.uow_probe (id int PRIMARY KEY, label text NOT NULL)`);
  });
  afterAll(() => k.close());
  beforeEach(() => sql.run(`TRUNCATE public.uow_probe`));

  const labels = async () => (await sql.rows<{ label: string }>(`SELECT label FROM public.uow_probe ORDER BY id`)).map((r) => r.label);
  const insert = (id: number, label: string) => sql.run(`INSERT INTO public.uow_probe (id, label) VALUES ($1, $2)`, [id, label]);
  /** Makes PostgreSQL itself raise the error with this SQLSTATE (as the driver reports it). */
  const raise = (state: string) => sql.run(`DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '${state}'; END $$`);

  describe('nesting', () => {
    it('joins the outer transaction: inner writes are seen inside and roll back with it', async () => {
      await expect(
        uow.run(async () => {
          await insert(1, 'outer');
          const inner = await uow.run(async () => {
            expect(uow.inTransaction).toBe(true);
            await insert(2, 'inner');
            return labels();
          });
          expect(inner).toEqual(['outer', 'inner']);
          throw new Error('outer fails');
        }),
      ).rejects.toThrow('outer fails');
      expect(await labels()).toEqual([]);
      expect(uow.inTransaction).toBe(false);
    });

    it('commits inner and outer work together', async () => {
      await uow.run(async () => {
        await insert(1, 'outer');
        await uow.run(() => insert(2, 'inner'));
      });
      expect(await labels()).toEqual(['outer', 'inner']);
    });

    it('does not retry a nested run on its own: the outermost run retries the whole transaction', async () => {
      let outer = 0;
      let inner = 0;
      await uow.run(async () => {
        outer++;
        await insert(outer, `attempt ${outer}`);
        await uow.run(async () => {
          inner++;
          if (inner === 1) await raise('40001');
        });
      });
      expect({ outer, inner }).toEqual({ outer: 2, inner: 2 });
      expect(await labels()).toEqual(['attempt 2']);
    });
  });

  describe('retries', () => {
    it.each([
      ['40001', 'serialization_failure'],
      ['40P01', 'deadlock_detected'],
    ])('re-runs the whole transaction after %s (%s) from the database, and the failed attempt leaves nothing', async (state) => {
      let attempts = 0;
      const result = await uow.run(async () => {
        attempts++;
        await insert(attempts, `attempt ${attempts}`);
        if (attempts < 3) await raise(state);
        return 'done';
      });
      expect(result).toBe('done');
      expect(attempts).toBe(3);
      expect(await labels()).toEqual(['attempt 3']);
    });

    it('gives up after eight attempts, pausing between them, and answers busy (503, Retry-After), not a 500', async () => {
      let attempts = 0;
      await expect(
        uow.run(async () => {
          attempts++;
          await raise('40001');
        }),
      ).rejects.toMatchObject({ code: 'SERVICE.BUSY', kind: 'unavailable', retryAfterSeconds: 1 });
      expect(attempts).toBe(8);
    });

    it('keeps running again after 55P03 (a NOWAIT lock held elsewhere) past eight attempts, pausing longer each time', async () => {
      let attempts = 0;
      const started = Date.now();
      const result = await uow.run(async () => {
        attempts++;
        await insert(attempts, `attempt ${attempts}`);
        if (attempts < 12) await raise('55P03');
        return 'done';
      });
      expect(result).toBe('done');
      expect(attempts).toBe(12);
      expect(await labels()).toEqual(['attempt 12']);
      // Pauses of 10, 20, 40, … ms (each at least half of it), up to 250 ms: about a second in all.
      expect(Date.now() - started).toBeGreaterThan(600);
    });

    it('re-runs once after an unmapped unique violation, then answers it as a conflict (issue 13)', async () => {
      await insert(1, 'taken');
      let attempts = 0;
      await expect(
        uow.run(async () => {
          attempts++;
          await insert(1, 'again');
        }),
      ).rejects.toMatchObject({ kind: 'conflict', code: 'STATE.CONFLICT' });
      expect(attempts).toBe(2);
    });

    it('does not retry other errors', async () => {
      let attempts = 0;
      await expect(
        uow.run(async () => {
          attempts++;
          await raise('22P02');
        }),
      ).rejects.toMatchObject({ driverError: { code: '22P02' } });
      expect(attempts).toBe(1);
    });
  });

  describe('hooks', () => {
    it('runs after-commit work once the outermost transaction has committed', async () => {
      const seen: string[] = [];
      await uow.run(async () => {
        await uow.run(async () => uow.afterCommit(async () => void seen.push(`after commit: ${(await labels()).join()}`)));
        await insert(1, 'row');
        expect(seen).toEqual([]);
      });
      // Run outside the transaction: it sees the committed row.
      expect(seen).toEqual(['after commit: row']);
    });

    it('drops after-commit work on rollback and runs after-rollback work instead, per attempt', async () => {
      const seen: string[] = [];
      let attempts = 0;
      await expect(
        uow.run(async () => {
          attempts++;
          uow.afterCommit(() => void seen.push(`commit ${attempts}`));
          uow.afterRollback(() => void seen.push(`rollback ${attempts}`));
          if (attempts === 1) await raise('40P01');
          throw new Error('use case fails');
        }),
      ).rejects.toThrow('use case fails');
      expect(seen).toEqual(['rollback 1', 'rollback 2']);
    });

    it('logs and swallows a failing after-commit hook: the change stays committed', async () => {
      await uow.run(async () => {
        await insert(1, 'kept');
        uow.afterCommit(() => {
          throw new Error('hook fails');
        });
      });
      expect(await labels()).toEqual(['kept']);
    });

    it('refuses hooks outside a unit of work', () => {
      expect(() => uow.afterCommit(() => undefined)).toThrow(/outside a unit of work/);
      expect(() => uow.afterRollback(() => undefined)).toThrow(/outside a unit of work/);
    });
  });

  describe('runStatement: a unit of one statement, without a transaction', () => {
    /** The statements sent, as their first words. */
    const counted = async (work: () => Promise<unknown>): Promise<string[]> => {
      const probe = k.module.get(DataSource).createQueryRunner();
      const spy = jest.spyOn(Object.getPrototypeOf(probe) as { query: (text: string) => Promise<unknown> }, 'query');
      await probe.release();
      try {
        await work();
        // Not the embedded database's upkeep, which looks at it after a COMMIT on no unit's behalf.
        return spy.mock.calls
          .map(([text]) => String(text).trim())
          .filter((text) => !text.startsWith(UPKEEP_MARK))
          .map((text) => text.split(/\s+/)[0]);
      } finally {
        spy.mockRestore();
      }
    };

    it('sends its statement alone, no BEGIN or COMMIT, and may publish (it is a unit, not a transaction)', async () => {
      const seen: boolean[] = [];
      const published: string[] = [];
      k.bus.subscribe(Alone, 'after-commit', (e) => void published.push(e.name));
      const sent = await counted(() =>
        uow.runStatement(async () => {
          seen.push(uow.inUnit, uow.inTransaction);
          await insert(1, 'alone');
          await k.bus.publish(new Alone());
          expect(published).toEqual([]);
        }, [Alone]),
      );
      expect(sent).toEqual(['INSERT']);
      expect(seen).toEqual([true, false]);
      expect(await labels()).toEqual(['alone']);
      expect(published).toEqual(['probe.alone']);
    });

    it('stays without a transaction when the only in-tx handler of what it publishes rides the statement', async () => {
      const handled: string[] = [];
      k.bus.subscribe(Ridden, 'in-tx', (e) => void handled.push(e.name), { ridesStatement: true });
      const sent = await counted(() =>
        uow.runStatement(async () => {
          await insert(1, 'ridden');
          await k.bus.publish(new Ridden());
        }, [Ridden]),
      );
      expect(sent).toEqual(['INSERT']);
      expect(handled).toEqual(['probe.ridden']);
    });

    it('is a transaction when an in-tx handler of what it publishes needs one: the handler may write, and its failure undoes the change', async () => {
      let fail = true;
      k.bus.subscribe(Guarded, 'in-tx', async () => {
        expect(uow.inTransaction).toBe(true);
        await insert(2, 'by the handler');
        if (fail) throw new Error('handler refuses');
      });
      const unit = () =>
        uow.runStatement(async () => {
          await insert(1, 'the change');
          await k.bus.publish(new Guarded());
        }, [Guarded]);
      await expect(unit()).rejects.toThrow('handler refuses');
      expect(await labels()).toEqual([]);
      fail = false;
      const sent = await counted(unit);
      expect(sent).toEqual(['START', 'INSERT', 'INSERT', 'COMMIT']);
      expect(await labels()).toEqual(['the change', 'by the handler']);
    });

    it('refuses, before the handler runs, an event it did not declare whose in-tx handler needs a transaction', async () => {
      const handled: string[] = [];
      k.bus.subscribe(Undeclared, 'in-tx', (e) => void handled.push(e.name));
      await expect(
        uow.runStatement(async () => {
          await insert(1, 'committed alone');
          await k.bus.publish(new Undeclared());
        }),
      ).rejects.toThrow(/did not declare it/);
      expect(handled).toEqual([]);
    });

    it('refuses a second statement: it would be a change of its own', async () => {
      await expect(
        uow.runStatement(async () => {
          await insert(1, 'first');
          await insert(2, 'second');
        }),
      ).rejects.toThrow(/second statement/);
      expect(await labels()).toEqual(['first']);
    });

    it('joins the transaction of an outer run, where more statements may follow and roll back with it', async () => {
      await expect(
        uow.run(async () => {
          await uow.runStatement(async () => {
            expect(uow.inTransaction).toBe(true);
            await insert(1, 'joined');
          });
          await insert(2, 'after');
          throw new Error('outer fails');
        }),
      ).rejects.toThrow('outer fails');
      expect(await labels()).toEqual([]);
    });

    it('is retried after a deadlock or serialization failure, and runs its hooks', async () => {
      let attempts = 0;
      const hooks: string[] = [];
      await uow.runStatement(async () => {
        attempts++;
        uow.afterCommit(() => void hooks.push(`commit ${attempts}`));
        uow.afterRollback(() => void hooks.push(`rollback ${attempts}`));
        if (attempts < 2) await raise('40P01');
        else await insert(1, `attempt ${attempts}`);
      });
      expect(attempts).toBe(2);
      expect(hooks).toEqual(['rollback 1', 'commit 2']);
      expect(await labels()).toEqual(['attempt 2']);
    });
  });

  describe('untilFree: a step taking rows NOWAIT, tried again alone', () => {
    it('undoes only the step after 55P03 and tries it again: the unit runs once, its work before the step kept', async () => {
      let units = 0;
      const tries: number[] = [];
      const result = await uow.run(async () => {
        units++;
        await insert(1, 'before');
        return uow.untilFree(async (attempt) => {
          tries.push(attempt);
          await insert(10 + attempt, `try ${attempt}`);
          if (attempt < 3) await raise('55P03');
          return 'done';
        });
      });
      expect([result, units, tries]).toEqual(['done', 1, [1, 2, 3]]);
      expect(await labels()).toEqual(['before', 'try 3']);
    });

    it('answers busy (503) once its budget, counted from its first try, is spent; any other error goes on at once', async () => {
      const now = Date.now.bind(Date);
      let tries = 0;
      const clock = jest.spyOn(Date, 'now');
      try {
        await expect(
          uow.run(() =>
            uow.untilFree(async () => {
              // The first try met a held row, and 16 s pass before the next would.
              if (tries++ === 0) clock.mockImplementation(() => now() + 16_000);
              await raise('55P03');
            }),
          ),
        ).rejects.toMatchObject({ code: 'SERVICE.BUSY', retryAfterSeconds: 1 });
      } finally {
        clock.mockRestore();
      }
      expect(tries).toBe(1);
      await expect(uow.run(() => uow.untilFree(() => raise('22023')))).rejects.toMatchObject({ code: '22023' });
    });
  });

  // A real deadlock needs a second connection, which embedded PGlite does not have.
  if (process.env.DATABASE_URL) {
    it('untilFree lets a 55P03 go on while another session waits for a lock the unit holds: the whole unit runs again', async () => {
      await insert(1, 'held by the unit');
      const other = new pg.Client({ connectionString: k.databaseUrl });
      await other.connect();
      try {
        let units = 0;
        let otherDone: Promise<unknown> | undefined;
        await uow.run(async () => {
          units++;
          await sql.run(`SELECT 1 FROM public.uow_probe WHERE id = 1 FOR UPDATE`);
          if (units === 1) {
            otherDone = other.query(`UPDATE public.uow_probe SET label = 'other' WHERE id = 1`);
            while (!(await sql.rows(`SELECT 1 FROM pg_locks WHERE NOT granted`)).length) await new Promise((resolve) => setTimeout(resolve, 10));
          }
          // The holder of the row the step wants may be that waiting session: only letting go ends that.
          await uow.untilFree(() => (units === 1 ? raise('55P03') : Promise.resolve()));
        });
        await otherDone;
        expect(units).toBe(2);
      } finally {
        await other.end();
      }
    });


    it('survives a real deadlock against another connection', async () => {
      await insert(1, 'a');
      await insert(2, 'b');
      const other = new pg.Client({ connectionString: k.databaseUrl });
      await other.connect();
      try {
        // The other session waits 10 s before checking for deadlocks, so the unit of work's
        // session (1 s, the default) detects it and is the one PostgreSQL aborts.
        await other.query(`SET deadlock_timeout = '10s'`);
        await other.query('BEGIN');
        let attempts = 0;
        let otherDone: Promise<unknown> | undefined;
        await uow.run(async () => {
          attempts++;
          await sql.run(`UPDATE public.uow_probe SET label = 'uow' WHERE id = 1`);
          if (attempts === 1) {
            await other.query(`UPDATE public.uow_probe SET label = 'other' WHERE id = 2`);
            otherDone = other.query(`UPDATE public.uow_probe SET label = 'other' WHERE id = 1`).then(() => other.query('COMMIT'));
            await new Promise((resolve) => setTimeout(resolve, 100)); // the other session now waits for row 1
          }
          await sql.run(`UPDATE public.uow_probe SET label = 'uow' WHERE id = 2`);
        });
        await otherDone;
        expect(attempts).toBe(2);
        expect(await labels()).toEqual(['uow', 'uow']);
      } finally {
        await other.end();
      }
    });

    it('takes a row another connection holds for two seconds with NOWAIT, once it is let go', async () => {
      await insert(1, 'held');
      const other = new pg.Client({ connectionString: k.databaseUrl });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`SELECT 1 FROM public.uow_probe WHERE id = 1 FOR UPDATE`);
        const letGo = new Promise((resolve) => setTimeout(resolve, 2_000)).then(() => other.query('COMMIT'));
        let attempts = 0;
        await uow.run(async () => {
          attempts++;
          await sql.run(`SELECT 1 FROM public.uow_probe WHERE id = 1 FOR UPDATE NOWAIT`);
          await sql.run(`UPDATE public.uow_probe SET label = 'taken' WHERE id = 1`);
        });
        await letGo;
        expect(attempts).toBeGreaterThan(8);
        expect(await labels()).toEqual(['taken']);
      } finally {
        await other.end();
      }
    });
  }
});
