import { Logger } from '@nestjs/common';
import pg from 'pg';
import { ClientGoneError, clientWatch } from '../client-watch.js';

/**
 * Database work of a request whose client went away is cancelled
 * (docs/RELIABILITY.md, "A request whose client left stops its work").
 *
 * The pool's connections (`cancellingClient`) read the request's
 * `ClientWatch` (`client-watch.ts`) at every statement:
 *
 * - a statement running when the client leaves is cancelled with the
 *   protocol's CancelRequest, sent on a connection of its own, so a pool
 *   whose every connection runs a runaway filter can still stop them;
 * - a statement sent after it left is refused without being sent;
 * - statements that end a transaction (COMMIT, ROLLBACK, RELEASE) always go
 *   out: a transaction is always ended, and work that reached its COMMIT
 *   is kept.
 *
 * Either way the statement fails with SQLSTATE 57014, as a statement
 * PostgreSQL cancelled does: its transaction is rolled back and the unit of
 * work does not run it again. Without this a client's gone request held its
 * pooled connection (and a core) until its statement ended, up to
 * DATABASE_STATEMENT_TIMEOUT_MS later. The embedded database does not use
 * these connections: its statements run to their end.
 */

/** Statements that end a transaction: always sent, never cancelled. */
const ENDS_TRANSACTION = /^\s*(?:COMMIT|ROLLBACK|RELEASE|END|ABORT)\b/i;

/** Longest wait for the server to take a CancelRequest; the query's own answer comes in any case. */
const CANCEL_CONNECT_TIMEOUT_MS = 5000;

const logger = new Logger('RequestCancellation');

type AnyQuery = (this: pg.Client, config: unknown, ...rest: unknown[]) => unknown;
type Endpoint = { host: string; port: number; processID: number | null; secretKey: number | null };

/**
 * A `pg.Client` class (derived from `Base`) whose statements stop when their
 * request's client goes away (see above). Statements sent outside a request
 * (migrations, start-up, a test's own queries), with a callback, or as a
 * submittable (cursors, streams) are sent as `Base` sends them.
 */
export function cancellingClient(Base: typeof pg.Client): typeof pg.Client {
  class CancellingClient extends Base {}
  // Looked up at each call, not kept: a test's probe may wrap `Base`'s query after this class is made.
  const send: AnyQuery = function (config, ...rest) {
    return (Base.prototype.query as AnyQuery).call(this, config, ...rest);
  };
  // Assigned rather than declared, as in prepared-statements.ts: `query` has a dozen overloads.
  (CancellingClient.prototype as unknown as { query: AnyQuery }).query = function query(config, ...rest) {
    const watch = clientWatch();
    if (!watch) return send.call(this, config, ...rest);
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    const plain = typeof text === 'string' && typeof (config as { submit?: unknown }).submit !== 'function';
    if (!plain || rest.some((arg) => typeof arg === 'function') || ENDS_TRANSACTION.test(text)) return send.call(this, config, ...rest);
    if (watch.gone) return Promise.reject(new ClientGoneError());
    let cancelled: Promise<void> | undefined;
    const endpoint = this as unknown as Endpoint;
    const stopListening = watch.onLeave(() => {
      logger.log(`the client of a request went away: cancelling its statement on backend ${String(endpoint.processID)}`);
      cancelled = sendCancelRequest(endpoint);
    });
    // A cancel still on its way could reach the backend's NEXT statement (the
    // connection back in the pool, another request's): the statement's
    // caller, and so the pool, get the connection back only once the server
    // has taken the CancelRequest and closed its connection.
    return (send.call(this, config, ...rest) as Promise<unknown>).then(
      (result) => {
        stopListening();
        return cancelled ? cancelled.then(() => result) : result;
      },
      (error: unknown) => {
        stopListening();
        if (!cancelled) throw error;
        return cancelled.then(() => Promise.reject(error));
      },
    );
  };
  return CancellingClient;
}

/**
 * Sends PostgreSQL's CancelRequest for the backend `client` talks to, on a
 * new connection (no pool slot, no authentication). Resolves once the server
 * closed that connection, which it does after signalling the backend (or on
 * any failure: the cancel is best effort, the statement ends anyway).
 */
function sendCancelRequest(client: Endpoint): Promise<void> {
  const { processID, secretKey } = client;
  if (processID === null || secretKey === null) return Promise.resolve();
  return new Promise((resolve) => {
    // Plain TCP: a CancelRequest is taken before SSL and authentication.
    const con = new pg.Connection({ ssl: false, keepAlive: false } as never) as pg.Connection & {
      connect(port: number | string, host?: string): void;
      cancel(processID: number, secretKey: number): void;
      stream: { destroy(): void };
    };
    const timer = setTimeout(() => done(), CANCEL_CONNECT_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      con.stream.destroy();
      resolve();
    };
    con.on('error', done);
    con.on('end', done);
    con.on('connect', () => con.cancel(processID, secretKey));
    if (client.host.startsWith('/')) con.connect(`${client.host}/.s.PGSQL.${client.port}`);
    else con.connect(client.port, client.host);
  });
}
