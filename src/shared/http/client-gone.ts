import type { NextFunction, Request, Response } from 'express';
import { ClientWatch, whileClientWaits } from '../client-watch.js';

/**
 * Runs the rest of a request (guards, pipes, its handler) with a watch that
 * is told when its client closes the connection before the answer went out:
 * the request's statements are then cancelled
 * (persistence/request-cancellation.ts). A response that ended is not a
 * client that left: 'close' follows 'finish' on every response.
 *
 * Express middleware installed after the body parsers (app.factory.ts), not
 * a Nest interceptor: any interceptor puts every request through Nest's RxJS
 * pipeline, which cost 9 % of a cheap request's CPU (docs/PERFORMANCE.md,
 * ninth pass). The route runs inside `next()`, so everything it awaits
 * sees the watch.
 */
export function cancelWhenClientGoes() {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const watch = new ClientWatch();
    if (res.destroyed) watch.leave();
    else res.once('close', () => res.writableFinished || watch.leave());
    whileClientWaits(watch, next);
  };
}
