import { parseList, readId } from './list-value.parser.js';
import { invalidValue } from './field-value.errors.js';

export function parseCardRef(field: string, input: unknown): number {
  const id = readId(input);
  if (id === null) throw invalidValue(field, 'expected a card id');
  return id;
}

export function parseRelationships(field: string, input: unknown): number[] | null {
  return parseList(field, input, parseCardRef, (id) => id);
}
