import { InvalidInputError } from './domain-error.js';

const MAX_ID = 2 ** 53 - 1;

/** True for values usable as entity ids (positive safe integers). */
export function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_ID;
}

/**
 * An id given in a request (a body or query property): a positive safe
 * integer, or its decimal string without leading zeros (up to 15 digits, all
 * safe); undefined for anything else, which the caller refuses with its
 * module's 400 naming the property.
 */
export function idFrom(value: unknown): number | undefined {
  if (isId(value)) return value;
  return typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value) ? Number(value) : undefined;
}

/** Parses an id given in a body property; clear 400 naming the property otherwise. */
export function requireId(value: unknown, field: string): number {
  if (isId(value)) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value) && Number(value) > 0) return Number(value);
  throw new InvalidInputError(`${field} must be a positive integer id`, [
    { field, message: 'must be a positive integer id' },
  ]);
}
