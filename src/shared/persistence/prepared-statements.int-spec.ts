import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestKernel, type TestKernel } from '../../../test/support/test-kernel.js';
import { prepared, preparedName } from './prepared-statements.js';
import type { Sql } from './sql.js';
import type { UnitOfWork } from './unit-of-work.js';

/**
 * Statements marked `prepared(…)` go out as named prepared statements on the
 * app's own connections (PostgreSQL; the embedded database runs them as
 * before), and unmarked ones stay unnamed. Read back from the connection's own
 * `pg_prepared_statements`, inside one transaction so that every statement
 * runs on that one connection.
 */
describe('prepared statements', () => {
  let k: TestKernel;
  let uow: UnitOfWork;
  let sql: Sql;
  const onServer = process.env.DATABASE_URL !== undefined;

  beforeAll(async () => {
    k = await createTestKernel();
    ({ uow, sql } = k);
  });
  afterAll(() => k.close());

  const namedOnThisConnection = () =>
    sql.rows<{ name: string; statement: string }>(`SELECT name, statement FROM pg_prepared_statements ORDER BY name`);

  it('runs a marked statement with its parameters, named once per connection on PostgreSQL', async () => {
    const text = prepared(`SELECT $1::int + 1 AS n /* prepared-statements spec */`);
    const { first, second, named } = await uow.run(async () => ({
      first: await sql.one<{ n: number }>(text, [1]),
      second: await sql.one<{ n: number }>(text, [41]),
      named: await namedOnThisConnection(),
    }));
    expect([first?.n, second?.n]).toEqual([2, 42]);
    const mine = named.filter((r) => r.statement === text);
    expect(mine.map((r) => r.name)).toEqual(onServer ? [preparedName(text)] : []);
  });

  it('sends unmarked statements unnamed', async () => {
    const text = `SELECT $1::int * 2 AS n /* unmarked */`;
    const { row, named } = await uow.run(async () => ({ row: await sql.one<{ n: number }>(text, [21]), named: await namedOnThisConnection() }));
    expect(row?.n).toBe(42);
    expect(preparedName(text)).toBeUndefined();
    expect(named.some((r) => r.statement === text)).toBe(false);
  });

  it('gives each distinct text its own name, and the same text the same name', () => {
    const a = prepared(`SELECT 1 /* a */`);
    const b = prepared(`SELECT 1 /* b */`);
    expect(preparedName(a)).toMatch(/^cw_\d+$/);
    expect(preparedName(b)).not.toBe(preparedName(a));
    expect(preparedName(prepared(`SELECT 1 /* a */`))).toBe(preparedName(a));
  });
});
