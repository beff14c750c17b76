import type { NextFunction, Request, Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';

/** NUL, or a UTF-16 surrogate without its pair: PostgreSQL text can store neither. */
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_DEPTH = 64;

/** Path of the first unsafe string (or key) in a parsed body, or undefined. */
export function findUnsafeString(value: unknown, path = '', depth = 0): string | undefined {
  if (typeof value === 'string') return UNSAFE.test(value) ? path || '(body)' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > MAX_DEPTH) return path || '(body)';
  for (const [key, item] of Object.entries(value)) {
    const here = path ? `${path}.${key}` : key;
    if (UNSAFE.test(key)) return here;
    const found = findUnsafeString(item, here, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Refuses request strings the database cannot store, in one place for every
 * route, so a title with a NUL byte is a 400 naming the field, never a 500.
 * Routes in `except` check such strings themselves (with a better message).
 */
export function rejectUnsafeStrings(options: { except?: RegExp[] } = {}) {
  const except = options.except ?? [];
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (except.some((pattern) => pattern.test(req.path))) return next();
    const field = findUnsafeString(req.body) ?? findUnsafeString(req.query);
    if (!field) return next();
    next(
      new InvalidInputError(`${field}: must not contain NUL characters or unpaired surrogates`, [
        { field, message: 'must not contain NUL characters or unpaired surrogates' },
      ]),
    );
  };
}
