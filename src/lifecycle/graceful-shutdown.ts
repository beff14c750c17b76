import net from 'node:net';
import type { Server } from 'node:http';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { DrainState } from '../shared/http/draining.js';

/**
 * How long the stop at the deadline waits after cutting the connections.
 * A cut socket closes in the event loop's close phase and only then do its
 * request's 'close' listeners run (the request log line among them); the
 * server's own 'close' comes earlier, so it cannot be the signal.
 */
const CUT_CLOSE_WAIT_MS = 50;

/**
 * How long after the signal the keep-alive connections still idle are
 * closed (at most half the grace). A request a client sent on one just
 * before the signal arrives well within it and is answered; waiting for
 * Node's keep-alive timeout instead (5 s) made every stop with a client
 * holding an idle connection take 5 s, and one whose SHUTDOWN_GRACE_MS was
 * shorter end cut, exit 1.
 */
const IDLE_CLOSE_AFTER_MS = 1000;

/**
 * SIGTERM drain (DESIGN.md §1, §10): readiness turns false, the listener
 * closes (new connections are refused), answers carry `Connection: close`,
 * in-flight requests finish, a request that comes on a keep-alive connection
 * already open is answered (and its connection closed after it), keep-alive
 * connections left idle are closed a second after the signal, then Nest closes
 * (database pool) and the process exits 0. Whatever is still open at
 * `graceMs` is cut, each cut request logged, and the process exits 1.
 * The function returned cuts at once, as the deadline would: an operator's
 * second signal means "stop now", and Node's default action for it (death
 * by signal) would lose the request log lines still buffered.
 */
export function drainAndExit(app: INestApplication, graceMs: number, logger: LoggerService, signal: string): (signal: string) => void {
  app.get(DrainState).start();
  const server = app.getHttpServer() as Server;
  logger.log(`${signal} received: draining (deadline ${graceMs} ms)`, 'Shutdown');
  let cut = false;
  const cutNow = (why: string) => {
    if (cut) return;
    cut = true;
    clearTimeout(deadline);
    logger.warn(`${why}: closing the connections still open`, 'Shutdown');
    server.closeAllConnections();
    setTimeout(() => process.exit(1), CUT_CLOSE_WAIT_MS);
  };
  const deadline = setTimeout(() => cutNow(`still draining after ${graceMs} ms`), graceMs);
  // The listener stops; the connections already open stay until they are
  // done: each closes after its next answer, which carries `Connection:
  // close`, or, idle, after IDLE_CLOSE_AFTER_MS.
  // Not http's server.close(), which since Node 19 also closes the keep-alive
  // connections idle at that moment: a request a client had just sent on one
  // was lost, reset (ECONNRESET) without an answer, and a POST cannot be
  // retried blindly. The callback runs once every connection is closed, after
  // a cut too, before the cut requests are logged: the deadline exits then.
  const idleClose = setTimeout(() => server.closeIdleConnections(), Math.min(IDLE_CLOSE_AFTER_MS, graceMs / 2));
  net.Server.prototype.close.call(server, () => {
    clearTimeout(idleClose);
    if (cut) return;
    app
      .close()
      .then(() => {
        clearTimeout(deadline);
        logger.log('drained, exiting', 'Shutdown');
        process.exit(0);
      })
      .catch(() => process.exit(1));
  });
  return (second) => cutNow(`${second} received while draining`);
}
