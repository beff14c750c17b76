import { CONTROL_CHARACTER_MESSAGE, hasControlCharacter, longerThan } from '../../../shared/domain/safe-text.js';
import { idFrom } from '../../../shared/domain/ids.js';
import { readPosition as readRequestedPosition } from '../../../shared/domain/positions.js';
import { InvalidGroupingInputError } from './grouping.errors.js';

/** Clamps a requested 0-based position into [0, max]; no position → last (max). */
export function slot(requested: number | undefined, max: number): number {
  if (requested === undefined) return max;
  return Math.min(Math.max(0, requested), max);
}

/** Group titles are unique per scope and type regardless of case (so `#todo` names one group). */
export function sameTitle(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}


/** An id given in a request body or query: a positive integer (or its decimal string), else 400 naming the property. */
export function readId(value: unknown, field: string): number {
  const id = idFrom(value);
  if (id === undefined) throw new InvalidGroupingInputError(field, 'must be a positive integer id');
  return id;
}

/** A position given in a request (shared `readPosition`), refused as grouping's 400 naming `field`. */
export function readPosition(value: unknown, field = 'position'): number | undefined {
  return readRequestedPosition(value, (message) => new InvalidGroupingInputError(field, message));
}

export const MAX_NAME = 1024;

/**
 * A group title or group type name: trimmed, non-empty, at most 1024
 * characters, no control characters (the rules of field names, since a group
 * type's name is also its field's name).
 */
export function readName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value.trim()) throw new InvalidGroupingInputError(field, 'must be a non-empty string');
  const name = value.trim();
  const problem = nameProblem(name);
  if (problem) throw new InvalidGroupingInputError(field, problem);
  return name;
}

/** Why a trimmed, non-empty name breaks `readName`'s rules, or undefined. */
export function nameProblem(name: string): string | undefined {
  if (longerThan(name, MAX_NAME)) return `must be at most ${MAX_NAME} characters`;
  if (hasControlCharacter(name)) return CONTROL_CHARACTER_MESSAGE;
  return undefined;
}
