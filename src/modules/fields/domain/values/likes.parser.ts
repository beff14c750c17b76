import type { LikeVote } from './field-value.types.js';
import { invalidValue } from './field-value.errors.js';

export function parseLikes(field: string, input: unknown): LikeVote | null {
  if (input === null) return null;
  const value = typeof input === 'string' && /^\s*[+-]?\d\s*$/.test(input) ? Number(input) : input;
  if (value === -1 || value === 0 || value === 1) return value === 0 ? 0 : value;
  throw invalidValue(field, 'expected a vote: -1, 0 or 1');
}
