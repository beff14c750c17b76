import type { Server } from 'node:http';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { DrainState } from '../shared/http/draining.js';

/**
 * SIGTERM drain (DESIGN.md §1, §10): readiness turns false, the listener
 * closes (new connections are refused), answers carry `Connection: close`,
 * in-flight requests finish, idle keep-alive sockets close, then Nest closes
 * (database pool) and the process exits 0. Whatever is still open at
 * `graceMs` is cut and the process exits 1.
 */
export function drainAndExit(app: INestApplication, graceMs: number, logger: LoggerService, signal: string): void {
  app.get(DrainState).start();
  const server = app.getHttpServer() as Server;
  logger.log(`${signal} received: draining (deadline ${graceMs} ms)`, 'Shutdown');
  const deadline = setTimeout(() => {
    logger.warn(`connections still open after ${graceMs} ms: closing them`, 'Shutdown');
    server.closeAllConnections();
    process.exit(1);
  }, graceMs);
  // close() also closes the keep-alive sockets idle right now; the busy ones
  // close after their answer, which carries `Connection: close`.
  server.close(() => {
    app
      .close()
      .then(() => {
        clearTimeout(deadline);
        logger.log('drained, exiting', 'Shutdown');
        process.exit(0);
      })
      .catch(() => process.exit(1));
  });
}
