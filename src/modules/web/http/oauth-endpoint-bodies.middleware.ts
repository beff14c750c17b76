import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { OAuthEndpointAnswer } from '../../identity/index.js';
import { ConcurrencyLimitedError, ServiceBusyError } from '../../../shared/domain/domain-error.js';
import { capBody, tooLargeDetail } from '../../../shared/http/body-limits.js';
import { holdParsedBodies } from '../../../shared/http/body-memory.js';
import { verifyUtf8Form } from '../../../shared/http/invalid-utf8.js';
import type { SlowBodyAnswer } from '../../../shared/http/slow-bodies.js';
import { refuseUnreadBodies } from '../../../shared/http/unread-bodies.middleware.js';
import type { UploadMemoryBudget } from '../../../shared/upload-memory.js';

/** The token and revocation endpoints: form bodies only (RFC 6749 §3.2, RFC 7009 §2.1). */
export const OAUTH_ENDPOINT_PATHS = ['/oauth/token', '/oauth/revoke'];

const FORM = 'application/x-www-form-urlencoded';
/** The library's own words for a body that is not a form, so every such body reads alike. */
const NOT_A_FORM = `Invalid request: content must be ${FORM}`;

/** Writes an answer of the token or revocation endpoint (RFC 6749 §5.1, §5.2; RFC 7009 §2.2). */
export function sendEndpointAnswer(res: Response, answer: OAuthEndpointAnswer): void {
  res.status(answer.status).set(answer.headers).json(answer.body);
}

/**
 * A refusal in RFC 6749 §5.2 form: 400 `invalid_request` for a malformed
 * request, 413 or 408 (still `invalid_request`) for one too large or too
 * slow to read, 503 or 429 `temporarily_unavailable` (§4.1.2.1's code) for
 * one the upload memory cannot take now. The description is ours, never a
 * parser's message: it must be printable ASCII without `"` or `\`.
 */
function refuse(res: Response, status: 400 | 405 | 408 | 413 | 429 | 500 | 503, description: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const error = status === 500 ? 'server_error' : status === 503 || status === 429 ? 'temporarily_unavailable' : 'invalid_request';
  sendEndpointAnswer(res, { status, headers: { 'Cache-Control': 'no-store', ...headers }, body: { error, error_description: description } });
}

/** body-parser's failures on a form (by its `type`), and the upload memory's refusal, as these endpoints answer them. */
function refuseUnparsed(res: Response, error: unknown, limit: number): void {
  // The upload memory's refusals: the whole budget (503), or this address's share of it (429).
  // Their messages are ours, printable ASCII without quotes.
  if (error instanceof ServiceBusyError || error instanceof ConcurrencyLimitedError) {
    return refuse(res, error instanceof ServiceBusyError ? 503 : 429, error.message, { 'Retry-After': String(error.retryAfterSeconds) });
  }
  const { type, status } = error as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large') return refuse(res, 413, tooLargeDetail(limit));
  if (type === 'parameters.too.many') return refuse(res, 413, 'Request body has too many parameters');
  if (type === 'charset.unsupported') return refuse(res, 400, 'Invalid request: unsupported charset (send UTF-8)');
  if (type === 'encoding.unsupported') return refuse(res, 400, 'Invalid request: unsupported Content-Encoding');
  // verifyUtf8Form's refusal: the form's bytes or escapes are not UTF-8.
  if (type === 'entity.verify.failed') return refuse(res, 400, 'Invalid request: the form must be valid UTF-8');
  if (typeof status === 'number' && status < 500) return refuse(res, 400, 'Invalid request: malformed request body');
  (res as Response & { err?: unknown }).err = error;
  refuse(res, 500, 'The request body could not be read');
}

/**
 * Both endpoints take POST only (RFC 6749 §3.2, RFC 7009 §2.1): any other
 * method on the endpoint's own path is a 405 with `Allow: POST`, in RFC 6749
 * JSON like every other refusal there (the library's words for it), before
 * any body is read. Paths below it (`/oauth/token/x`) are no endpoint: 404.
 */
function refuseOtherMethods(req: Request, res: Response): boolean {
  if (req.method === 'POST' || (req.path !== '/' && req.path !== '')) return false;
  refuse(res, 405, 'Invalid request: method must be POST', { Allow: 'POST' });
  return true;
}

/**
 * Reads the body of a token or revocation request before the app-wide
 * parsers, which then find it read and leave it: so OAuth clients, which
 * parse RFC 6749 error JSON from these endpoints, get it for every refusal
 * of the body too, not problem+json. A body of another type (JSON, malformed
 * or not, multipart, text) is refused unread, as the library refuses a JSON
 * body; a form over `limit` is a 413 at once, as elsewhere.
 */
export function readOAuthEndpointBodies(limit: number, memory: UploadMemoryBudget): RequestHandler {
  const refuseOtherTypes = refuseUnreadBodies([FORM], (_req, res) => refuse(res, 400, NOT_A_FORM));
  // A code or secret sent as `%FF` would otherwise be read as the text "%FF" and answered invalid_grant.
  // Held against the upload memory while read, as every other form (a 503 past it, a 429 past the address's share).
  const parseForm = holdParsedBodies(memory, express.urlencoded({ limit, extended: false, verify: verifyUtf8Form }));
  const tooLarge = (res: Response): void => refuse(res, 413, tooLargeDetail(limit));
  return (req: Request, res: Response, next: NextFunction): void => {
    if (refuseOtherMethods(req, res)) return;
    if (req.method !== 'POST') return next();
    refuseOtherTypes(req, res, () => {
      if (!capBody(req, res, limit, tooLarge)) return;
      parseForm(req, res, (error?: unknown) => (error ? refuseUnparsed(res, error, limit) : next()));
    });
  };
}

/** refuseSlowBodies' 408 for the token and revocation endpoints: RFC 6749 JSON, as their other refusals. */
export const oauthEndpointTooSlow: SlowBodyAnswer = (res, detail) => refuse(res, 408, detail);
