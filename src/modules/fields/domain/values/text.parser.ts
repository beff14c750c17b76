import { longerThan } from '../../../../shared/domain/safe-text.js';
import { invalidValue } from './field-value.errors.js';
import { isStorableText } from './json.guards.js';

export const MAX_TEXT_LENGTH = 10_000;
export const MAX_CONTENT_LENGTH = 100_000;

function parseString(field: string, input: unknown, max: number, what: string): string | null {
  if (input === null) return null;
  if (typeof input !== 'string') throw invalidValue(field, `expected ${what}`);
  if (longerThan(input, max)) throw invalidValue(field, `expected ${what} of at most ${max} characters`);
  if (!isStorableText(input)) throw invalidValue(field, `expected ${what} without NUL characters or invalid Unicode`);
  return input;
}

export function parseText(field: string, input: unknown): string | null {
  return parseString(field, input, MAX_TEXT_LENGTH, 'a string');
}

export function parseContent(field: string, input: unknown): string | null {
  return parseString(field, input, MAX_CONTENT_LENGTH, 'a markdown string');
}
