import type { NextFunction, Request, Response } from 'express';
import { bodySent } from './body-limits.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const READS = new Set(['GET', 'HEAD']);

/** Reads whose query is their body (`queryAsBody`). */
const QUERIES_FROM_BODIES = new WeakSet<Request>();

/** Whether the request's `query` came from its body, so its URL's query string is not what it asked. */
export function queryCameFromBody(req: Request): boolean {
  return QUERIES_FROM_BODIES.has(req);
}

function isEmpty(query: object): boolean {
  for (const _ in query) return false;
  return true;
}

/**
 * DESIGN.md §2: request parameters may come as a JSON body, form fields or the
 * query string, "the query string only when there is no body". A write that
 * sends no body but a query string gets the query as its body, so it is
 * validated exactly like the other two forms. A body that was sent is the
 * body, even `{}` or an empty form: its query string is not read. (A body of
 * a type the API does not read never gets here: refuseUnreadBodies answers
 * 415.) A multipart body always counts as sent: an upload route reads its
 * own later, chunked or not, uncounted here, and refuses a query string
 * beside it (UnknownParametersGuard) rather than leave it unread.
 *
 * A read works the other way round: its parameters are read as a query, so
 * a JSON or form body sent with a GET becomes its query (`queryFromBody`),
 * and the URL's query string is not read. Before, a listing checked such a
 * body for bad text and then answered as if it had not been sent: a
 * `{"filter": …}` body listed every card.
 */
export function queryAsBody(req: Request, _res: Response, next: NextFunction): void {
  const multipart = (req.headers['content-type'] ?? '').startsWith('multipart/');
  if (WRITES.has(req.method) && !multipart && !bodySent(req) && !isEmpty(req.query as object)) {
    req.body = { ...(req.query as Record<string, unknown>) };
  } else if (READS.has(req.method) && req.body !== undefined && bodySent(req)) {
    // Express 5's `req.query` is a getter over the URL: shadowed by an own property.
    Object.defineProperty(req, 'query', { value: queryFromBody(req.body), configurable: true, enumerable: true, writable: true });
    QUERIES_FROM_BODIES.add(req);
  }
  next();
}

/**
 * A read's body as the query it stands for: numbers and booleans as the text
 * a query string would carry them in, anything else (objects, arrays, null)
 * as it came, for the route's checks to refuse. A body that is not an object
 * is one parameter named `(body)`, which no route takes.
 */
function queryFromBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { '(body)': body };
  // fromEntries defines each key, `__proto__` too (an own key, refused as unknown), never a prototype.
  return Object.fromEntries(
    Object.entries(body).map(([key, value]) => [key, typeof value === 'number' || typeof value === 'boolean' ? String(value) : value]),
  );
}
