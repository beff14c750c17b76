import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';

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
 * Installed once on the prototype of the app's responses (Express's
 * `app.response`, which every response is made on: ExpressHttpAdapter), not
 * per request.
 */
export function closeConnectionsWhileDraining(state: DrainState, responses: Pick<ServerResponse, 'writeHead'>): void {
  const writeHead = responses.writeHead;
  responses.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (state.draining && !this.headersSent) this.setHeader('Connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
}
