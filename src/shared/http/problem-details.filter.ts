import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError, NotFoundError, UnauthorizedError, type DomainErrorKind } from '../domain/domain-error.js';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_TROUBLE_DETAIL, databaseTrouble, isStatementCancelled } from '../persistence/database-availability.js';
import { constraintViolation, sqlState, violationAsDomainError } from '../persistence/sql-errors.js';
import { AnswerSent } from './answer-sent.js';
import { sendProblem, titleFor, type Problem } from './problem.js';
import { allowedMethods } from './route-methods.js';

const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  unavailable: 503,
};

export const BASIC_CHALLENGE = 'Basic realm="cardwork"';

/** The one place where errors become HTTP responses (STYLE.md §4). */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof AnswerSent) return;
    const ctx = host.switchToHttp();
    sendProblem(ctx.getResponse<Response>(), this.toProblem(error, ctx.getRequest<Request>()));
  }

  toProblem(error: unknown, req: Request): Problem {
    // A route with a parameter took a path that a literal route has
    // (`DELETE /projects/all` reached `/projects/:id`), and the parameter named
    // nothing: the path does not take the method, as `Allow` says.
    if (error instanceof NotFoundError && routeOwnPath(req)) {
      const allow = allowedMethods(req);
      if (allow.length && !allow.includes(req.method)) return methodNotAllowed(req.method, allow);
    }
    if (error instanceof DomainError) return fromDomainError(error);
    // No route took the request (Nest's not-found handler, a catch-all `*path`
    // route): a path that routes have, asked with a method none takes, is a
    // 405 naming those it takes.
    if (error instanceof NotFoundException && !routeOwnPath(req)) {
      const allow = allowedMethods(req);
      if (allow.length) return methodNotAllowed(req.method, allow);
    }
    // Express's router could not percent-decode a path parameter (`/cards/%C0%80`):
    // such a path names no resource, like any id that is not a plain decimal (DESIGN.md §2).
    if (isUndecodablePathParam(error)) return fromDomainError(new NotFoundError('Resource'));
    // A violation from a statement outside any unit of work (which would have re-run it).
    const violation = constraintViolation(error);
    if (violation) return fromDomainError(violationAsDomainError(violation));
    const status = httpStatusOf(error);
    if (status !== undefined && status < 500) return fromClientError(error, status);
    const trouble = databaseTrouble(error);
    if (trouble) {
      // PostgreSQL is away (restart, failover, network), read-only, out of
      // resources, or every pooled connection is in use: the client may retry
      // shortly, and the pool reconnects by itself (DESIGN.md §10).
      attachForLog(req, error);
      return retryLater(trouble === 'busy' ? 'SERVICE.BUSY' : 'SERVICE.UNAVAILABLE', DATABASE_TROUBLE_DETAIL[trouble]);
    }
    if (isStatementCancelled(error)) {
      // Past DATABASE_STATEMENT_TIMEOUT_MS (a runaway statement, or a lock held
      // longer than that): PostgreSQL cancelled it and rolled its transaction
      // back. Busy rather than broken: the client may retry. Logged with the
      // statement, as a 5xx is.
      attachForLog(req, error);
      return retryLater('SERVICE.BUSY', 'The request\'s database work ran past its time limit and was cancelled; retry after Retry-After seconds');
    }
    if (sqlState(error).startsWith('22')) {
      // A PostgreSQL data exception (value out of range, bad encoding…) is bad
      // input that slipped past validation: still the client's 400, but logged.
      this.logger.warn(`${req.method} ${req.originalUrl}: data exception ${sqlState(error)}: ${(error as Error).message}`);
      return { status: 400, type: 'INPUT.INVALID', title: titleFor(400), detail: 'A value in the request cannot be stored' };
    }
    attachForLog(req, error);
    return { status: 500, type: 'SERVER.ERROR', title: titleFor(500), detail: 'Internal server error' };
  }
}

/** Whether a route of the app's own (a path without wildcards) took the request. */
function routeOwnPath(req: Request): boolean {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && !path.includes('*');
}

function methodNotAllowed(method: string, allow: string[]): Problem {
  const detail = `${method} is not a method of this path; it takes ${allow.join(', ')}`;
  return { status: 405, type: 'HTTP.405', title: titleFor(405), detail, headers: { Allow: allow.join(', ') } };
}

/** A 503 the client may retry after DATABASE_RETRY_AFTER_SECONDS. */
function retryLater(type: string, detail: string): Problem {
  return { status: 503, type, title: titleFor(503), detail, headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) } };
}

/**
 * The request log line (`requestLogging`) of a 5xx carries the error and its stack,
 * next to the request id; the body never does.
 */
function attachForLog(req: Request, error: unknown): void {
  if (req.res) (req.res as Response & { err?: unknown }).err = error instanceof Error ? error : new Error(String(error));
}

function fromDomainError(error: DomainError): Problem {
  const status = STATUS_BY_KIND[error.kind];
  const headers: Record<string, string> = {};
  if (status === 401) headers['WWW-Authenticate'] = error instanceof UnauthorizedError ? error.challenge : BASIC_CHALLENGE;
  // Rate limits, a busy server, storage that cannot take a file now: each says when to come back.
  const { retryAfterSeconds } = error as { retryAfterSeconds?: unknown };
  if (typeof retryAfterSeconds === 'number') headers['Retry-After'] = String(retryAfterSeconds);
  return {
    status,
    type: error.code,
    title: titleFor(status),
    detail: error.message,
    errors: error.errors,
    extra: error.extra,
    headers,
  };
}

/** Nest and body-parser errors (unknown route, malformed JSON, too large…). */
function fromClientError(error: unknown, status: number): Problem {
  const bodyParserType = (error as { type?: unknown }).type;
  let detail = (error as Error).message || titleFor(status);
  if (bodyParserType === 'entity.parse.failed') detail = jsonParseDetail((error as { body?: unknown }).body);
  if (bodyParserType === 'entity.too.large') detail = 'Request body is too large';
  if (error instanceof HttpException) {
    const response = error.getResponse();
    if (typeof response === 'object' && response && 'message' in response) {
      const m = (response as { message: unknown }).message;
      detail = Array.isArray(m) ? m.join('; ') : String(m);
    }
  }
  const headers: Record<string, string> = status === 401 ? { 'WWW-Authenticate': BASIC_CHALLENGE } : {};
  return { status, type: `HTTP.${status}`, title: titleFor(status), detail, headers };
}

/**
 * body-parser's strict JSON refuses a body that is valid JSON but neither an
 * object nor an array (`null`, `42`, `"text"`) with the same error as a
 * broken one; saying "malformed" of valid JSON sends the client looking for
 * a typo. Only a short body is re-parsed: a long one that failed is malformed.
 */
function jsonParseDetail(body: unknown): string {
  if (typeof body === 'string' && body.length <= 1024) {
    try {
      const value: unknown = JSON.parse(body);
      return `The request body must be a JSON object, not ${value === null ? 'null' : typeof value}`;
    } catch {
      // Malformed indeed.
    }
  }
  return 'Malformed JSON in request body';
}

/**
 * The error Express's router raises for a path parameter that does not
 * percent-decode: a URIError marked 400, which Nest's adapter hands on as the
 * cause of a BadRequestException.
 */
function isUndecodablePathParam(error: unknown): boolean {
  const e = (error instanceof HttpException ? error.cause : error) as { name?: unknown; status?: unknown; message?: unknown } | null | undefined;
  // By name: test runners hand the app errors made in another realm than its code's.
  return e?.name === 'URIError' && e.status === 400 && typeof e.message === 'string' && e.message.startsWith('Failed to decode param');
}

function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof HttpException) return error.getStatus();
  const e = error as { status?: unknown; statusCode?: unknown; expose?: unknown };
  const status = e?.status ?? e?.statusCode;
  // body-parser and http-errors mark client errors with `expose`.
  if (typeof status === 'number' && status >= 400 && status < 500 && e.expose !== false) return status;
  return undefined;
}
