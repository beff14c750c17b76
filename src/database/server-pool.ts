import { Logger } from '@nestjs/common';
import pg from 'pg';
import { connectionNotOpened, keepSessionEnd, PoolBusyError } from '../shared/persistence/database-availability.js';

/**
 * The requests' connections to a PostgreSQL server, as outages see them
 * (docs/RELIABILITY.md, "PostgreSQL outage"): a pool whose failures to lend
 * a connection say why (`RequestsPool`), and connections that give up on a
 * statement PostgreSQL never answers (`answerDeadlineClient`).
 */

const logger = new Logger('DatabasePool');

/**
 * What a statement's answer may take beyond DATABASE_STATEMENT_TIMEOUT_MS:
 * PostgreSQL cancels the statement at the timeout and answers at once, so an
 * answer still missing this much later will not come.
 */
export const ANSWER_MARGIN_MS = 5_000;
/**
 * The deadline when requests have no statement timeout
 * (DATABASE_STATEMENT_TIMEOUT_MS=0): longer than any request a load balancer
 * still waits for, short enough that a hung connection comes back.
 */
export const UNBOUND_ANSWER_DEADLINE_MS = 600_000;

/** How long a requests' connection waits for the answer to a statement before it closes. */
export function answerDeadlineMs(statementTimeoutMs: number): number {
  return statementTimeoutMs > 0 ? statementTimeoutMs + ANSWER_MARGIN_MS : UNBOUND_ANSWER_DEADLINE_MS;
}

/** What lifts a transaction's statement timeout (UnitOfWork.liftStatementTimeout): its statements are not bound either. */
const LIFTS_TIMEOUT = /^\s*SET\s+LOCAL\s+statement_timeout\s*(?:=|TO)\s*0\s*;?\s*$/i;
/** Statements that end a transaction (a rollback to a savepoint does not). */
const ENDS_TRANSACTION = /^\s*(?:COMMIT|END|ABORT|ROLLBACK(?!\s+TO\b))\b/i;
const LIFTED = Symbol('answerDeadlineLifted');

type AnyQuery = (this: pg.Client, config: unknown, ...rest: unknown[]) => unknown;
type DeadlineState = { [LIFTED]?: boolean; processID?: number | null; connection?: { stream?: { destroy(): void } } };

/**
 * A `pg.Client` class (derived from `Base`) that closes its connection when a
 * statement gets no answer within `deadlineMs`: the statement fails as one
 * cut by the network (503, `Retry-After`) and the pool drops the connection.
 * Without it a stalled connection (TCP alive, no answer: a hung pooler,
 * PostgreSQL frozen on I/O) held its request, and every request after it on
 * that connection, for as long as the stall lasted; `statement_timeout` is
 * PostgreSQL's and cannot end a wait on the network. pg's own
 * `query_timeout` is not used: it fails the statement but keeps the
 * connection, still busy, in the pool, and it cannot be lifted for the one
 * transaction that lifts the statement timeout (a project's deletion).
 */
export function answerDeadlineClient(Base: typeof pg.Client, deadlineMs: number): typeof pg.Client {
  class AnswerDeadlineClient extends Base {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // What ended the session while no statement waited, for the unit of work to say (SessionEndedError).
      keepSessionEnd(this);
    }
  }
  // Looked up at each call, as cancellingClient does.
  const send: AnyQuery = function (config, ...rest) {
    return (Base.prototype.query as AnyQuery).call(this, config, ...rest);
  };
  // Assigned rather than declared, as in prepared-statements.ts: `query` has a dozen overloads.
  (AnswerDeadlineClient.prototype as unknown as { query: AnyQuery }).query = function query(config, ...rest) {
    const state = this as unknown as DeadlineState;
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    if (typeof text === 'string') {
      if (ENDS_TRANSACTION.test(text)) state[LIFTED] = false;
      else if (LIFTS_TIMEOUT.test(text)) state[LIFTED] = true;
    }
    const result = send.call(this, config, ...rest);
    if (state[LIFTED] || !(result instanceof Promise)) return result;
    const timer = setTimeout(() => closeUnanswered(state, deadlineMs), deadlineMs);
    return result.finally(() => clearTimeout(timer));
  };
  return AnswerDeadlineClient;
}

function closeUnanswered(client: DeadlineState, deadlineMs: number): void {
  logger.warn(`no answer from PostgreSQL (backend ${String(client.processID)}) in ${deadlineMs} ms: closing the connection`);
  client.connection?.stream?.destroy();
}

type ConnectCallback = (err: Error | undefined, client: unknown, done: (release?: unknown) => void) => void;
type PoolConnect = (this: pg.Pool, cb?: ConnectCallback) => unknown;
const poolConnect = pg.Pool.prototype.connect as PoolConnect;
/** pg-pool's words when a request waited `connectionTimeoutMillis` for a connection of a full pool. */
const QUEUE_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * The requests' pool. A connection it cannot lend is an outage or a busy
 * server, never a fault of the request: an error opening a connection is
 * marked so (`connectionNotOpened`), whatever PostgreSQL said, and a wait
 * that timed out while every connection was open and lent is a
 * `PoolBusyError` (SERVICE.BUSY), not "the database is not reachable".
 */
export class RequestsPool extends pg.Pool {
  /** Connections open: lent or idle (the pool's own count includes those still connecting). */
  private open = 0;

  constructor(options?: pg.PoolConfig) {
    super(options);
    this.on('connect', () => this.open++);
    this.on('remove', () => this.open--);
  }

  get busy(): boolean {
    return this.open >= (this.options.max ?? 10);
  }
}

(RequestsPool.prototype as unknown as { connect: PoolConnect }).connect = function connect(cb?: ConnectCallback) {
  const why = (err: Error): Error => {
    if (err.message === QUEUE_TIMEOUT && (this as RequestsPool).busy) return new PoolBusyError(this.options.connectionTimeoutMillis ?? 0, err);
    return connectionNotOpened(err);
  };
  if (cb) return poolConnect.call(this, (err, client, done) => cb(err && why(err), client, done));
  return (poolConnect.call(this) as Promise<unknown>).catch((err: Error) => Promise.reject(why(err)));
};

/** The `pg` module as TypeORM's `driver` option takes it, with the requests' pool. */
export const requestsDriver = { ...pg, Pool: RequestsPool };
