import { invalidValue } from './field-value.errors.js';

export const MAX_LIST_ITEMS = 1000;

/**
 * Set on a multi-valued field replaces the list with one value or an array of
 * them. `keyOf` names the identity used to drop repeats (first one wins);
 * without it every entry is kept (two uploads of one file are two files).
 */
export function parseList<T>(
  field: string,
  input: unknown,
  parseItem: (field: string, item: unknown) => T,
  keyOf?: (item: T) => string | number,
): T[] | null {
  if (input === null) return null;
  const items = Array.isArray(input) ? input : [input];
  if (items.length > MAX_LIST_ITEMS) throw invalidValue(field, `expected at most ${MAX_LIST_ITEMS} values`);
  const parsed = items.map((item) => parseItem(field, item));
  if (!keyOf) return parsed;
  const seen = new Set<string | number>();
  return parsed.filter((item) => {
    const key = keyOf(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const NUMERIC_ID = /^\d{1,16}$/;

/** Positive safe integer, or the same written as a string (form fields and query strings carry only strings). */
export function readId(input: unknown): number | null {
  const value = typeof input === 'string' && NUMERIC_ID.test(input.trim()) ? Number(input.trim()) : input;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}
