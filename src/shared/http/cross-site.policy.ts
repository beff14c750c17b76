import type { Request } from 'express';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Methods that change nothing: the cross-site rule lets them through. */
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method);

/**
 * Whether a browser sent this write from a page of another site. A browser
 * attaches the Basic credentials it remembers for the API's origin (a 401
 * asks for them) to every request there, and any page can post a form to it
 * without a CORS preflight; the API answers no CORS, so no legitimate client
 * writes from another site's page. Fetch Metadata (`Sec-Fetch-Site`) names
 * the sender's site; a browser without it still sends `Origin` with a form
 * post. Clients that are not browsers send neither, and pass.
 */
export function isCrossSiteWrite(req: Request, serviceOrigins: ReadonlySet<string>): boolean {
  if (isSafeMethod(req.method)) return false;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  return !serviceOrigins.has(origin) && origin !== `${req.protocol}://${req.headers.host}`;
}
