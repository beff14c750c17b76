import type { NextFunction, Request, Response } from 'express';
import { bodySent } from './body-limits.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
 * own later, chunked or not, uncounted here.
 */
export function queryAsBody(req: Request, _res: Response, next: NextFunction): void {
  const multipart = (req.headers['content-type'] ?? '').startsWith('multipart/');
  if (WRITES.has(req.method) && !multipart && !bodySent(req) && !isEmpty(req.query as object)) {
    req.body = { ...(req.query as Record<string, unknown>) };
  }
  next();
}
