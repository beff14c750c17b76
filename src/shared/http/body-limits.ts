import type { NextFunction, Request, Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';
import { sendProblem, titleFor } from './problem.js';

/** Content types the JSON parser reads. */
export const JSON_BODY_TYPES = ['application/json', 'application/*+json'];
/** Content types the JSON and form parsers read; DESIGN.md §2 caps them at 1 MiB. */
export const PARSED_BODY_TYPES = [...JSON_BODY_TYPES, 'application/x-www-form-urlencoded'];
export const MAX_JSON_DEPTH = 64;

/** After an early answer, how much of the unread body is still taken in (and dropped) before the socket closes. */
const LINGER_MS = 2000;
const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * Closes the connection after the answer, like a web server's lingering close:
 * our side is half-closed at once, and what the client still sends is dropped
 * for a short bounded while, so the client reads its 413 instead of having it
 * wiped by a TCP reset; then the socket is destroyed.
 */
export function closeAfterAnswer(res: Response): void {
  res.setHeader('Connection', 'close');
  const socket = res.socket;
  if (!socket) return;
  socket.destroySoon = () => {
    socket.end();
    let dropped = 0;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER_BYTES) socket.destroy();
    });
    socket.once('close', () => clearTimeout(timer));
    socket.resume();
  };
}

/** Writes the 413 answer to a body over `limit`; problem+json unless a route's clients read another form. */
export type TooLargeAnswer = (res: Response, limit: number) => void;

export const tooLargeDetail = (limit: number): string => `Request body is larger than ${limit} bytes`;

function tooLargeProblem(res: Response, limit: number): void {
  sendProblem(res, { status: 413, type: 'INPUT.TOO_LARGE', title: titleFor(413), detail: tooLargeDetail(limit) });
}

/** The 413 answer a request gets, by what it is (a web page's path); `undefined` for problem+json. */
export type TooLargeAnswerFor = (req: Request) => TooLargeAnswer | undefined;

/**
 * Runs before the body parsers: a declared Content-Length over the limit is
 * refused at once, and a chunked body as soon as the bytes read pass it. The
 * byte counter is attached in the same tick as the parser's own listener, so
 * the parser sees every chunk. `answerFor` picks the answer's form (the web
 * pages' HTML error page); problem+json otherwise.
 */
export function limitParsedBodies(limit: number, answerFor: TooLargeAnswerFor = () => undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.is(PARSED_BODY_TYPES)) return next();
    if (capBody(req, res, limit, answerFor(req))) next();
  };
}

/**
 * `limitParsedBodies`' rule for one request whose body is about to be read:
 * false when a declared Content-Length over `limit` was answered with 413;
 * otherwise the bytes are counted as they come, and 413 answered (by
 * `answer`) once they pass it.
 */
export function capBody(req: Request, res: Response, limit: number, answer: TooLargeAnswer = tooLargeProblem): boolean {
  const refuse = (): void => {
    // body-parser alone would read the whole body before its 413.
    closeAfterAnswer(res);
    answer(res, limit);
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    refuse();
    return false;
  }
  let seen = 0;
  const count = (chunk: Buffer): void => {
    seen += chunk.length;
    (req as CountedRequest)[BYTES_READ] = seen;
    if (seen <= limit) return;
    req.off('data', count);
    refuse();
  };
  req.on('data', count);
  return true;
}

const BYTES_READ = Symbol('bytes of the body read');
type CountedRequest = Request & { [BYTES_READ]?: number };

/** Whether the request's head announces a body: a Content-Length over 0, or chunked (which may still turn out empty). */
export function announcesBody(req: Request): boolean {
  return Number(req.headers['content-length']) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Whether the request carried a body: a Content-Length over 0, or a chunked
 * body of which capBody counted a byte (a chunked body may be empty). An
 * empty JSON object or form is a body; no bytes at all is none.
 */
export function bodySent(req: Request): boolean {
  if (Number(req.headers['content-length']) > 0) return true;
  return req.headers['transfer-encoding'] !== undefined && ((req as CountedRequest)[BYTES_READ] ?? 0) > 0;
}

/** Nesting depth of a parsed JSON value (a scalar is 0, `[]` is 1); stops counting past `max`. */
export function jsonDepth(value: unknown, max = MAX_JSON_DEPTH): number {
  if (value === null || typeof value !== 'object') return 0;
  if (max < 0) return 1;
  let deepest = 0;
  for (const item of Object.values(value)) {
    deepest = Math.max(deepest, jsonDepth(item, max - 1));
    if (deepest > max) break;
  }
  return 1 + deepest;
}

/** JSON nested deeper than 64 levels → 400 saying so (not a message about strings). */
export function refuseDeepJson(req: Request, _res: Response, next: NextFunction): void {
  if (jsonDepth(req.body) <= MAX_JSON_DEPTH) return next();
  next(
    new InvalidInputError(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`, [
      { field: '(body)', message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]),
  );
}
