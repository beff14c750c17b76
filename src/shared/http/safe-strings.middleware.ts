import type { NextFunction, Request, Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';
import { hasUnsafeText, UNSAFE_TEXT_MESSAGE } from '../domain/safe-text.js';

const MAX_DEPTH = 64;

/** Path of the first unsafe string (or key) in a parsed body, or undefined. */
export function findUnsafeString(value: unknown): string | undefined {
  return findString(value, hasUnsafeText);
}

/** Path of the first string (or key) of a parsed body that `matches`, or undefined; a body nested too deep to walk is named too. */
export function findString(value: unknown, matches: (text: string) => boolean, path = '', depth = 0): string | undefined {
  if (typeof value === 'string') return matches(value) ? path || '(body)' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > MAX_DEPTH) return path || '(body)';
  for (const [key, item] of Object.entries(value)) {
    const here = path ? `${path}.${key}` : key;
    if (matches(key)) return here;
    const found = findString(item, matches, here, depth + 1);
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
      new InvalidInputError(`${field}: ${UNSAFE_TEXT_MESSAGE}`, [{ field, message: UNSAFE_TEXT_MESSAGE }]),
    );
  };
}
