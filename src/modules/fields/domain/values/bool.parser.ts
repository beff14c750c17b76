import { invalidValue } from './field-value.errors.js';
import { isStorableText } from './json.guards.js';

const FALSE_STRINGS = new Set(['false', 'no', '0', '']);

/** Strings follow the original service: only a few spellings mean false, any other string is true. */
export function parseBool(field: string, input: unknown): boolean | null {
  if (input === null) return null;
  if (typeof input === 'boolean') return input;
  if (input === 0 || input === 1) return input === 1;
  if (typeof input === 'string') {
    // Any other string is true, but not one no other field would take (DESIGN.md §2).
    if (!isStorableText(input)) throw invalidValue(field, 'expected a boolean, or a string without NUL characters or invalid Unicode');
    return !FALSE_STRINGS.has(input.trim().toLowerCase());
  }
  throw invalidValue(field, 'expected a boolean, 0 or 1, or a string ("false", "no", "0" and "" are false)');
}
