import { sqlState } from './sql-errors.js';

/**
 * Why the database cannot serve a request right now, as opposed to "this
 * statement is wrong": the server answers these with 503 and `Retry-After`
 * (DESIGN.md §10), and the pool reconnects by itself once PostgreSQL is back.
 *
 * - `unreachable`: no connection (refused, cut, timed out, shut down), or
 *   one the server refused to open (`connectionNotOpened`: a database that
 *   takes no connections, is gone, or no longer takes our password);
 * - `busy`: every connection of the pool is in use (`PoolBusyError`);
 * - `read-only`: the database refuses writes (25006: a standby or a demoted
 *   primary after a failover, a managed database turned read-only when its
 *   storage filled up);
 * - `out-of-resources`: SQLSTATE class 53 (disk full, out of memory, too many
 *   connections).
 */
export type DatabaseTrouble = 'unreachable' | 'busy' | 'read-only' | 'out-of-resources';

const UNREACHABLE_SQLSTATE = /^(08...|57P0[123])$/; // connection exceptions, shutdown
// ENOTFOUND: a database host name that does not resolve (yet: its container not up, a DNS outage).
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection closed|terminating connection|the database system is (starting up|shutting down)/i;

/** Set on an error raised while the requests' pool opened a connection (`connectionNotOpened`). */
const NOT_OPENED = Symbol.for('cardwork.databaseConnectionNotOpened');

/**
 * Marks `error` as raised while a pool connection was being opened: whatever
 * it says (55000 "database is not currently accepting connections", 3D000
 * the database gone, 28P01 a password rotated while the server runs), the
 * request could not reach the database, which is an outage, not a fault of
 * the request. Only the requests' pool marks (`database/server-pool.ts`):
 * the start's own connection still refuses at once what waiting cannot cure.
 */
export function connectionNotOpened<T>(error: T): T {
  if (error && typeof error === 'object') Object.defineProperty(error, NOT_OPENED, { value: true });
  return error;
}

/** Every connection of the requests' pool was in use for the pool's whole wait, the database answering. */
export class PoolBusyError extends Error {
  constructor(waitedMs: number, cause: unknown) {
    super(`all database connections are busy (waited ${waitedMs} ms for one)`, { cause });
    this.name = 'PoolBusyError';
  }
}

/**
 * SQLSTATEs of PostgreSQL ending a session it found idle: inside a
 * transaction past `idle_in_transaction_session_timeout` (25P03: the app
 * froze or lost its network mid-transaction, database/data-source.ts), or
 * outside one past `idle_session_timeout` (57P05). The transaction was rolled
 * back, never committed: not in UNREACHABLE_SQLSTATE, which a COMMIT's
 * failure reads as "may have committed" (`commitOutcomeUnknown`).
 */
const IDLE_SESSION_ENDED = new Set(['25P03', '57P05']);

const SESSION_ENDED = Symbol.for('cardwork.sessionEnded');

/**
 * Keeps on a pooled connection the error that ended it while none of its
 * statements was waiting (PostgreSQL's FATAL for an idle session, a reset):
 * TypeORM then lets go of the connection at once (the pool drops it), and
 * the transaction's next statement fails without saying why
 * (QueryRunnerAlreadyReleasedError); `SessionEndedError` says it.
 */
export function keepSessionEnd(client: NodeJS.EventEmitter): void {
  client.on('error', (error: unknown) => {
    const kept = client as unknown as Record<symbol, unknown>;
    kept[SESSION_ENDED] ??= error;
  });
}

/** What ended a connection `keepSessionEnd` watches, if anything did. */
export function sessionEndOf(connection: unknown): unknown {
  return connection && typeof connection === 'object' ? (connection as Record<symbol, unknown>)[SESSION_ENDED] : undefined;
}

/**
 * A transaction's statement (its COMMIT included) that was never sent: the
 * database had ended the transaction's session (`cause`), so the transaction
 * is rolled back and nothing of it committed. A 503 like the outage it is.
 */
export class SessionEndedError extends Error {
  constructor(cause: unknown) {
    super(`the database ended this transaction's connection before its next statement (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.name = 'SessionEndedError';
  }
}

/** Which `DatabaseTrouble` an error is, if any. */
export function databaseTrouble(error: unknown, depth = 0): DatabaseTrouble | undefined {
  if (!error || typeof error !== 'object' || depth > 3) return undefined;
  const e = error as { code?: unknown; message?: unknown; name?: unknown; driverError?: unknown; cause?: unknown };
  // By name: test runners hand the app errors made in another realm than its code's.
  if (e.name === 'PoolBusyError') return 'busy';
  if (typeof e.code === 'string') {
    if (e.code === '25006') return 'read-only';
    if (e.code.startsWith('53')) return 'out-of-resources';
    if (UNREACHABLE_SQLSTATE.test(e.code) || UNAVAILABLE_ERRNO.has(e.code) || IDLE_SESSION_ENDED.has(e.code)) return 'unreachable';
  }
  if ((error as Record<symbol, unknown>)[NOT_OPENED] === true) return 'unreachable';
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)) return 'unreachable';
  return databaseTrouble(e.driverError, depth + 1) ?? databaseTrouble(e.cause, depth + 1);
}

/** Whether an error means the database cannot serve right now (`databaseTrouble`). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return databaseTrouble(error) !== undefined;
}

/** What a client is told of each trouble (problem+json `detail`). */
export const DATABASE_TROUBLE_DETAIL: Record<DatabaseTrouble, string> = {
  unreachable: 'The database is not reachable; retry shortly',
  busy: 'All database connections are busy; retry after Retry-After seconds',
  'read-only': 'The database accepts no writes right now (read-only after a failover, or out of storage); retry shortly',
  'out-of-resources': 'The database is out of resources (disk, memory or connections); retry shortly',
};

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

/**
 * Whether a transaction whose COMMIT failed with `error` may have committed
 * all the same: the answer never came (the connection cut or closed, no
 * answer in time), or the server ended the session while committing (57P0x:
 * a backend terminated while waiting for synchronous replication has
 * committed locally). Any other answer (a deferred constraint, a
 * serialization failure) is PostgreSQL saying the transaction rolled back.
 */
export function commitOutcomeUnknown(error: unknown): boolean {
  if (error instanceof SessionEndedError) return false;
  const state = sqlState(error);
  const answered = /^[0-9A-Z]{5}$/.test(state) && !UNAVAILABLE_ERRNO.has(state);
  return !answered || UNREACHABLE_SQLSTATE.test(state) || /^(58|XX)/.test(state);
}
