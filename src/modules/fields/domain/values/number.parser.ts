import { invalidValue } from './field-value.errors.js';

// Plain decimal notation only: Number() alone would also take "0x10", "Infinity" and "".
const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A number written as a number field takes one from text (the filter reads its numbers so too). */
export function isDecimalNumber(text: string): boolean {
  return NUMERIC.test(text);
}

export function parseNumber(field: string, input: unknown): number | null {
  if (input === null) return null;
  let value: number;
  if (typeof input === 'number') {
    value = input;
  } else if (typeof input === 'string' && isDecimalNumber(input.trim())) {
    value = Number(input.trim());
  } else {
    throw invalidValue(field, 'expected a number');
  }
  if (!Number.isFinite(value)) throw invalidValue(field, 'expected a finite number');
  // -0 would survive JSON storage as 0; normalising here keeps parse(output) === output.
  return value === 0 ? 0 : value;
}
