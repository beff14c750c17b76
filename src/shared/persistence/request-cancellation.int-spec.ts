import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { createTestKernel, type TestKernel } from '../../../test/support/test-kernel.js';
import { ClientWatch, whileClientWaits } from '../client-watch.js';
import type { Sql } from './sql.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * The pool's connections stop a request's statements once its client is gone
 * (`cancellingClient`), on the app's own pool. The HTTP side (the watch told
 * when a client leaves) is test/e2e/hardening/client-gone. The
 * embedded database does not use these connections: nothing to test there.
 */
const describeWithServer = process.env.DATABASE_URL ? describe : describe.skip;

const sqlState = (error: unknown) => (error as { code?: string; driverError?: { code?: string } }).driverError?.code ?? (error as { code?: string }).code;

describeWithServer('statements of a request whose client went away', () => {
  let k: TestKernel;
  let uow: UnitOfWork;
  let sql: Sql;

  beforeAll(async () => {
    k = await createTestKernel();
    ({ uow, sql } = k);
  });
  afterAll(() => k.close());

  it('cancels the statement running when the signal aborts, at once (57014)', async () => {
    const gone = new ClientWatch();
    const started = Date.now();
    const sleeping = whileClientWaits(gone, () => sql.run('SELECT pg_sleep(20)'));
    setTimeout(() => gone.leave(), 200);
    const error = await sleeping.then(() => undefined, (e: unknown) => e);
    expect(sqlState(error)).toBe('57014');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses the statements sent after the signal aborted, and still ends the transaction', async () => {
    const gone = new ClientWatch();
    let beforeAbort: number | undefined;
    const error = await whileClientWaits(gone, () =>
      uow.run(async () => {
        await sql.run('CREATE TEMP TABLE client_gone_probe (n int) ON COMMIT DROP');
        beforeAbort = 1;
        gone.leave();
        await sql.run('INSERT INTO client_gone_probe VALUES (1)');
      }),
    ).then(() => undefined, (e: unknown) => e);
    expect(beforeAbort).toBe(1);
    expect(sqlState(error)).toBe('57014');
    // Refused without being sent (TypeORM wraps the driver's error).
    expect((error as { driverError?: Error }).driverError?.name).toBe('ClientGoneError');
    // The ROLLBACK went out: no connection is left "idle in transaction (aborted)",
    // and the probe table went with the transaction.
    const [open] = await k.module.get(DataSource).query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
    );
    expect(open.n).toBe(0);
    const [probe] = await sql.rows<{ t: string | null }>(`SELECT to_regclass('pg_temp.client_gone_probe')::text AS t`);
    expect(probe.t).toBeNull();
  });

  it('keeps work that reached its COMMIT', async () => {
    await sql.run('CREATE TABLE IF NOT EXISTS public.client_gone_kept (n int)');
    const gone = new ClientWatch();
    await whileClientWaits(gone, () =>
      uow.run(async () => {
        await sql.run('INSERT INTO public.client_gone_kept VALUES (7)');
        // The client leaves between the last statement and COMMIT.
        gone.leave();
      }),
    ).catch(() => undefined);
    // Read on a connection of its own: committed, not only seen by the transaction's own.
    const reader = new pg.Client({ connectionString: k.databaseUrl });
    await reader.connect();
    try {
      expect((await reader.query('SELECT n FROM public.client_gone_kept')).rows).toEqual([{ n: 7 }]);
    } finally {
      await reader.end();
    }
    await sql.run('DROP TABLE public.client_gone_kept');
  });

  it('runs the after-commit work of a change whose client left after it was made', async () => {
    const gone = new ClientWatch();
    let after: number | undefined;
    await whileClientWaits(gone, () =>
      uow.run(async () => {
        await sql.run('SELECT 1');
        // The file clean-up and after-commit handlers read and write once the change is in.
        uow.afterCommit(async () => {
          after = (await sql.one<{ n: number }>('SELECT 2 AS n'))?.n;
        });
        gone.leave();
      }),
    );
    expect(after).toBe(2);
  });

  it('hands the connection back only once the cancel was taken: the next statement on it is not cancelled', async () => {
    for (let i = 0; i < 20; i++) {
      const gone = new ClientWatch();
      // A short statement that may well end before the cancel arrives.
      const first = whileClientWaits(gone, () => sql.run('SELECT pg_sleep(0.005)'));
      setTimeout(() => gone.leave(), i % 5);
      await first.catch(() => undefined);
      // The pool's one idle connection is the one just used; its next statement must run.
      await expect(sql.run('SELECT pg_sleep(0.02)')).resolves.toBeUndefined();
    }
  });

  it('leaves statements outside a request as they are', async () => {
    await expect(sql.one<{ n: number }>('SELECT 1 AS n')).resolves.toEqual({ n: 1 });
  });
});
