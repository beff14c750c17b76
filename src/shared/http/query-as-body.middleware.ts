import type { NextFunction, Request, Response } from 'express';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function isEmpty(body: unknown): boolean {
  return body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0);
}

/**
 * DESIGN.md §2: request parameters may come as a JSON body, form fields or the
 * query string. A write that sends no body but a query string gets the query
 * as its body, so it is validated exactly like the other two forms. When a
 * body is sent, it alone counts; a multipart body always counts as sent
 * (multipartFields reads it, or the upload route itself).
 */
export function queryAsBody(req: Request, _res: Response, next: NextFunction): void {
  const multipart = (req.headers['content-type'] ?? '').startsWith('multipart/');
  if (WRITES.has(req.method) && !multipart && isEmpty(req.body) && !isEmpty(req.query)) {
    req.body = { ...(req.query as Record<string, unknown>) };
  }
  next();
}
