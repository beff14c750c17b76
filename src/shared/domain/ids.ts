import { InvalidInputError } from './domain-error.js';

const MAX_ID = 2 ** 53 - 1;

/** True for values usable as entity ids (positive safe integers). */
export function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_ID;
}

/**
 * An id written as text (a path segment, a form field, a JSON string): a plain
 * decimal positive integer that fits in 53 bits, without sign, spaces or
 * leading zeros (DESIGN.md §2); undefined for anything else. The one grammar
 * of path ids (ParseIdPipe) and body ids (idFrom, requireId).
 */
export function idFromText(text: string): number | undefined {
  return /^[1-9]\d{0,15}$/.test(text) && isId(Number(text)) ? Number(text) : undefined;
}

/**
 * An id given in a request (a body or query property): a positive safe
 * integer, or its decimal text (idFromText); undefined for anything else,
 * which the caller refuses with its module's 400 naming the property.
 */
export function idFrom(value: unknown): number | undefined {
  if (isId(value)) return value;
  return typeof value === 'string' ? idFromText(value) : undefined;
}

/** Parses an id given in a body property (idFrom); clear 400 naming the property otherwise. */
export function requireId(value: unknown, field: string): number {
  const id = idFrom(value);
  if (id !== undefined) return id;
  throw new InvalidInputError(`${field} must be a positive integer id`, [
    { field, message: 'must be a positive integer id' },
  ]);
}
