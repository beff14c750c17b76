import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * Set once SIGTERM arrives (DESIGN.md §1, §10): readiness turns false and every
 * answer written from then on, in-flight ones included, closes its connection.
 */
@Injectable()
export class DrainState {
  private since: number | undefined;

  get draining(): boolean {
    return this.since !== undefined;
  }

  start(): void {
    this.since ??= Date.now();
  }
}

/**
 * Adds `Connection: close` to every answer written while draining. The check
 * runs when the headers go out, not when the request came in, so a request
 * that was in flight at SIGTERM still closes its keep-alive connection.
 */
export function closeConnectionsWhileDraining(state: DrainState) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
      if (state.draining && !this.headersSent) this.setHeader('Connection', 'close');
      return writeHead.apply(this, args);
    } as Response['writeHead'];
    next();
  };
}
