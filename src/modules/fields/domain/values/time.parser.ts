import { invalidValue } from './field-value.errors.js';

const TIME = /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

export function isTimeOfDay(value: string): boolean {
  return TIME.test(value);
}

export function parseTime(field: string, input: unknown): string | null {
  if (input === null) return null;
  if (typeof input === 'string' && TIME.test(input.trim())) return input.trim();
  throw invalidValue(field, 'expected a time HH:MM:SS');
}
