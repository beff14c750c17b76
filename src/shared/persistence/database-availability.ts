import { sqlState } from './sql-errors.js';

/**
 * Whether an error means "the database cannot be reached right now" rather
 * than "this statement is wrong": the server answers those with 503 and
 * `Retry-After` (DESIGN.md §10), and the pool reconnects by itself once
 * PostgreSQL is back.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/; // connection exceptions, shutdown, too many connections
// ENOTFOUND: a database host name that does not resolve (yet: its container not up, a DNS outage).
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection closed|terminating connection|the database system is (starting up|shutting down)/i;

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 3) return false;
  const e = error as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATE.test(e.code) || UNAVAILABLE_ERRNO.has(e.code))) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)) return true;
  return isDatabaseUnavailable(e.driverError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}

/** Seconds a client is told to wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * A statement PostgreSQL cancelled (57014): it ran past the requests'
 * DATABASE_STATEMENT_TIMEOUT_MS (waiting for a lock counts), or an operator
 * cancelled it. Its transaction is rolled back. The unit of work does not run
 * it again (the same work would most likely meet the same limit); the client
 * gets a 503 and may retry.
 */
export function isStatementCancelled(error: unknown): boolean {
  return sqlState(error) === '57014';
}
