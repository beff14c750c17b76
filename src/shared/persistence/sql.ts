import { Injectable } from '@nestjs/common';
import { UnitOfWork } from './unit-of-work.js';

/** A row as the driver returns it (snake_case columns). */
export type Row = Record<string, unknown>;

/**
 * SQL plumbing for repositories (STYLE.md §2.8), in one place: every query
 * runs on the unit of work's manager (the open transaction's, else the
 * pool's), and rows come back as arrays whatever the statement.
 */
@Injectable()
export class Sql {
  constructor(private readonly uow: UnitOfWork) {}

  /** The rows of a SELECT, or of any statement with RETURNING. */
  async rows<T = Row>(sql: string, params: unknown[] = []): Promise<T[]> {
    return returnedRows<T>(await this.uow.manager.query(sql, params));
  }

  /** The first row, if any. */
  async one<T = Row>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.rows<T>(sql, params))[0];
  }

  /** A statement whose result does not matter (locks, writes without RETURNING). */
  async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.uow.manager.query(sql, params);
  }
}

/** TypeORM answers UPDATE/DELETE … RETURNING with `[rows, affected]`, other statements with the rows. */
export function returnedRows<T = Row>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return Array.isArray(result) ? (result as T[]) : [];
}

/** A json/jsonb column: parsed by pg, text with PGlite. */
export function jsonColumn<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

// bigint columns arrive as numbers with both drivers (pg's parseInt8; on PGlite the INT8
// parser database/embedded-driver.ts installs). Rows are typed unknown: these make them ids
// (a decimal string, such as a bigint a query casts to text, comes out the same).

export function toId(value: unknown): number {
  return Number(value);
}

export function toIdOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** A bigint[] column: an array (pg) or its text form `{1,2}` (PGlite). */
export function toIds(value: unknown): number[] {
  if (Array.isArray(value)) return value.map(Number);
  const inner = String(value ?? '').replace(/^\{|\}$/g, '');
  return inner ? inner.split(',').map(Number) : [];
}
