import { isUtf8 } from 'node:buffer';
import querystring from 'node:querystring';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';
import { findString } from './safe-strings.middleware.js';

/**
 * Text of a request whose bytes are not UTF-8 is refused (400 naming the
 * parameter), wherever it comes from. The parsers read it in two ways: a
 * JSON body's bytes, a query string's escapes and a multipart field's bytes
 * as U+FFFD, a form field's escapes (`title=%FF`) as the literal text `%FF`
 * (qs keeps what decodeURIComponent refuses). Like NUL (DESIGN.md §2), such
 * text cannot be stored as it was sent.
 */
export const INVALID_UTF8_MESSAGE = 'must be valid UTF-8';

export function invalidUtf8Error(field: string): InvalidInputError {
  return new InvalidInputError(`${field}: ${INVALID_UTF8_MESSAGE}`, [{ field, message: INVALID_UTF8_MESSAGE }]);
}

/** An escape of a byte outside ASCII: only these can decode to bytes that are not UTF-8. */
const HIGH_ESCAPE = /%[89a-f][0-9a-f]/i;
/** A `%` that starts no escape, which the parsers keep as it is. */
const LONE_PERCENT = /%(?![0-9a-f]{2})/gi;

/**
 * The name of the first parameter of urlencoded text (a query string, a form
 * body) whose escapes do not decode as UTF-8, or undefined. A name and its
 * value decode alike or not at all (UTF-8 cannot run across the `=`).
 */
export function undecodableParameter(encoded: string): string | undefined {
  if (!HIGH_ESCAPE.test(encoded)) return undefined;
  for (const pair of encoded.split('&')) {
    if (!HIGH_ESCAPE.test(pair) || decodes(pair)) continue;
    const name = pair.split('=', 1)[0].replace(/\+/g, ' ');
    // shown as the query parser keys it, with U+FFFD where it does not decode
    return querystring.unescape(name);
  }
  return undefined;
}

function decodes(encoded: string): boolean {
  try {
    decodeURIComponent(encoded.replace(LONE_PERCENT, '%25'));
    return true;
  } catch {
    return false;
  }
}

/**
 * body-parser's `verify` for JSON (`form` false) and form bodies: given the
 * raw bytes before they are decoded. One pass of `isUtf8` over the bytes; a
 * form's escapes are read again only when it has a `%`. A body declared in
 * another charset (a form may be ISO-8859-1) is decoded as declared.
 */
function verifyUtf8(form: boolean) {
  return (_req: Request, _res: Response, body: Buffer, encoding: string | null): void => {
    if (encoding !== 'utf-8') return;
    if (!isUtf8(body)) throw invalidUtf8Error('(body)');
    if (!form || body.indexOf(0x25) === -1) return;
    const field = undecodableParameter(body.toString());
    if (field !== undefined) throw invalidUtf8Error(field);
  };
}

export const verifyUtf8Json = verifyUtf8(false);
export const verifyUtf8Form = verifyUtf8(true);

/**
 * Refuses a request whose query string has escapes that do not decode as
 * UTF-8 (the query parser would read them as U+FFFD), whether or not the
 * route reads it. Node refuses raw bytes outside ASCII in a request line, so
 * escapes are all there is to check. Paths in `except` answer their own.
 */
export function rejectUndecodableQueries(options: { except?: RegExp[] } = {}): RequestHandler {
  const except = options.except ?? [];
  return (req: Request, _res: Response, next: NextFunction): void => {
    const start = req.url.indexOf('?');
    const field = start === -1 ? undefined : undecodableParameter(req.url.slice(start + 1));
    if (field === undefined || except.some((pattern) => pattern.test(req.path))) return next();
    next(invalidUtf8Error(field));
  };
}

/** A multer middleware whose text fields are checked: `done` gets multer's error, or else the 400 of a field that is not UTF-8. */
export type CheckedMultipart = (req: Request, res: Response, done: (error?: unknown, notUtf8?: InvalidInputError) => void) => void;

/**
 * busboy reads a text part's bytes that are not UTF-8 as U+FFFD, and tells
 * nobody. So the raw bytes of a multipart body are kept while `parse` reads
 * it (the chunks as they come, no copy; up to `limit`, past which the body is
 * refused for its size, and none once the request is answered: its rest is
 * thrown away), and a text field (value or name) holding U+FFFD is one the
 * client sent only if the body holds its UTF-8 bytes. The bytes are joined
 * only for such a field; file parts are never looked at.
 */
export function checkUtf8Fields(parse: RequestHandler, limit: number): CheckedMultipart {
  return (req, res, done) => {
    let chunks: Buffer[] | undefined = [];
    let kept = 0;
    const keep = (chunk: Buffer): void => {
      kept += chunk.length;
      if (kept <= limit && !res.headersSent) chunks?.push(chunk);
      else chunks = undefined;
    };
    req.on('data', keep);
    parse(req, res, (error?: unknown) => {
      req.off('data', keep);
      const held = chunks;
      chunks = undefined;
      if (error || !held) return done(error);
      let raw: Buffer | undefined;
      const field = findString(req.body, (text) => text.includes('\uFFFD') && !(raw ??= Buffer.concat(held)).includes(Buffer.from(text)));
      done(undefined, field === undefined ? undefined : invalidUtf8Error(field));
    });
  };
}
