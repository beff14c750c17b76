import { setTimeout as delay } from 'node:timers/promises';
import type { INestApplication } from '@nestjs/common';
import { expect, jest } from '@jest/globals';
import { DataSource } from 'typeorm';

/**
 * Deadlocks PostgreSQL broke in the test's database, from
 * `pg_stat_database`: 0 on the embedded database, which runs one
 * transaction at a time.
 */
export async function deadlocks(app: INestApplication): Promise<number> {
  if (!process.env.DATABASE_URL) return 0;
  const [row] = await app.get(DataSource).query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`);
  return Number(row?.deadlocks ?? 0);
}

/**
 * Deadlocks since `before`. A victim's backend reports its deadlock when it
 * next goes idle, so a count of none is read again after a moment.
 */
export async function deadlocksSince(app: INestApplication, before: number): Promise<number> {
  if ((await deadlocks(app)) === before && process.env.DATABASE_URL) await delay(1_500);
  return (await deadlocks(app)) - before;
}

/** Waits (up to 5 s) until at least `n` sessions of the test's database wait for a lock. */
export async function untilWaitingForLocks(app: INestApplication, n: number): Promise<void> {
  const db = app.get(DataSource);
  const waiting = async () => {
    const [row] = await db.query(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return Number(row.n);
  };
  for (let i = 0; i < 200 && (await waiting()) < n; i++) await delay(25);
  expect(await waiting()).toBeGreaterThanOrEqual(n);
}

/**
 * Makes writes meet in one order every time: a third transaction holds what
 * `hold` locks, each of `sends` goes out once the ones before it wait for a
 * lock, and the hold is let go once all of them wait. Their answers, in order.
 * `hold.setup`: statements sent before `hold.sql` in that transaction (a
 * SET LOCAL); `hold.end`: how it lets go, committed unless 'rollback'.
 */
export async function sendWhileHeld<T>(
  app: INestApplication,
  hold: { sql: string; params: unknown[]; setup?: string[]; end?: 'commit' | 'rollback' },
  sends: Array<() => Promise<T>>,
): Promise<T[]> {
  const blocker = app.get(DataSource).createQueryRunner();
  await blocker.connect();
  const sent: Array<Promise<T>> = [];
  try {
    await blocker.startTransaction();
    for (const statement of hold.setup ?? []) await blocker.query(statement);
    await blocker.query(hold.sql, hold.params);
    for (const send of sends) {
      sent.push(send());
      await untilWaitingForLocks(app, sent.length);
    }
  } finally {
    await (hold.end === 'rollback' ? blocker.rollbackTransaction() : blocker.commitTransaction()).catch(() => undefined);
    await blocker.release();
  }
  return Promise.all(sent);
}

/**
 * Holds what `hold` locks in a third transaction for `ms`, `send` going out
 * once it is held: for a write that takes the row only if free (NOWAIT) and
 * tries again, so never waits for the lock. Its answer, whether it had come
 * before the hold was let go, and how often `counted` (a provider's method,
 * spied on meanwhile) was called.
 */
export async function sendWhileHeldFor<T>(
  app: INestApplication,
  hold: { sql: string; params: unknown[] },
  ms: number,
  send: () => Promise<T>,
  counted: { on: object; method: string },
): Promise<{ answer: T; answeredWhileHeld: boolean; calls: number }> {
  const spy = jest.spyOn(counted.on as Record<string, (...args: unknown[]) => unknown>, counted.method);
  const blocker = app.get(DataSource).createQueryRunner();
  let answered = false;
  let sent: Promise<T> | undefined;
  try {
    await blocker.connect();
    await blocker.startTransaction();
    await blocker.query(hold.sql, hold.params);
    sent = send().finally(() => (answered = true));
    await delay(ms);
    const answeredWhileHeld = answered;
    await blocker.commitTransaction();
    return { answer: await sent, answeredWhileHeld, calls: spy.mock.calls.length };
  } finally {
    if (blocker.isTransactionActive) await blocker.rollbackTransaction().catch(() => undefined);
    await blocker.release();
    spy.mockRestore();
  }
}
