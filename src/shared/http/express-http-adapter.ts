import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type express from 'express';

/**
 * Nest's Express adapter with three changes. The HTTP server builds each request
 * and response on Express's own prototypes (`app.request`, `app.response`),
 * the handlers' answers carry an ETag only for reads (below), and the server
 * takes the head timeout the configuration gives (REQUEST_HEADERS_TIMEOUT_MS).
 *
 * Express gives every request and response its prototypes with
 * `Object.setPrototypeOf` (express/lib/application.js, `app.handle`). V8
 * then keeps a good part of each request's objects alive past the next young
 * collection: about 18 KB a request was promoted to the old generation, to
 * die there, so the server ran a full collection about every 0.6 s and a
 * scavenge took 3–5 ms (docs/PERFORMANCE.md, issue 15, eighth pass). When
 * the object already has the prototype, V8's setPrototypeOf returns at once
 * and none of that happens: Node's server takes the classes to build its
 * requests and responses with (`http.createServer({ IncomingMessage,
 * ServerResponse })`), and these build them on Express's prototypes.
 */
export class ExpressHttpAdapter extends ExpressAdapter {
  /** False while a handler's answer to a write is being sent (`reply`). */
  private etagged = true;

  /** `timeouts`: how long a request's head may take to arrive (`headersTimeout`), and how often Node looks. */
  constructor(private readonly timeouts: Pick<http.ServerOptions, 'headersTimeout' | 'connectionsCheckingInterval'> = {}) {
    super();
    // Express hashes every body it sends, whatever the method. A client can
    // use the ETag of a GET or HEAD answer (If-None-Match, 304); that of an
    // answer to a POST, PUT or DELETE it cannot, and hashing it cost a write
    // about 2 % of its CPU (docs/PERFORMANCE.md, issue 15, ninth pass). Express's
    // ETag function is called inside `res.send`, which `reply` calls
    // synchronously, so a flag set around that call tells it which answer it hashes.
    const app = this.getInstance<express.Express>();
    const standard = app.get('etag fn') as (body: unknown, encoding?: string) => string | undefined;
    app.set('etag fn', (body: unknown, encoding?: string) => (this.etagged ? standard(body, encoding) : undefined));
  }

  override reply(response: express.Response, body: unknown, statusCode?: number): unknown {
    const method = response.req?.method;
    this.etagged = method === 'GET' || method === 'HEAD';
    try {
      return super.reply(response, body, statusCode);
    } finally {
      this.etagged = true;
    }
  }

  override initHttpServer(options: NestApplicationOptions): void {
    // HTTPS and Nest's connection tracking keep Nest's own server (this app uses
    // neither), and so would a Node whose request classes cannot be called.
    const plain = !options?.httpsOptions && !options?.forceCloseConnections && !options?.return503OnClosing;
    if (!plain || !callable(http.IncomingMessage) || !callable(http.ServerResponse)) {
      super.initHttpServer(options);
      if (this.timeouts.headersTimeout !== undefined) (this.getHttpServer() as http.Server).headersTimeout = this.timeouts.headersTimeout;
      return;
    }
    const app = this.getInstance<express.Express>();
    const IncomingMessage = onPrototype(http.IncomingMessage, app.request);
    const ServerResponse = onPrototype(http.ServerResponse, app.response);
    this.setHttpServer(http.createServer({ IncomingMessage, ServerResponse, ...this.timeouts }, app));
  }
}

/** Node 20 writes its request and response constructors as plain functions; a class could not be called as one. */
function callable(constructor: Function): boolean {
  return !/^class\b/.test(Function.prototype.toString.call(constructor));
}

/**
 * A constructor that runs `base`'s constructor on an object made with
 * `prototype` (which inherits from `base.prototype`, as Express's request
 * and response do). Not `Reflect.construct(base, args, Built)`: V8 then made
 * the objects as slowly, and kept as many of them alive, as setPrototypeOf did.
 */
function onPrototype<T extends typeof IncomingMessage | typeof ServerResponse>(base: T, prototype: object): T {
  const construct = base as unknown as (this: object, ...args: unknown[]) => void;
  function Built(this: object, ...args: unknown[]): void {
    construct.apply(this, args);
  }
  Built.prototype = prototype;
  return Built as unknown as T;
}
