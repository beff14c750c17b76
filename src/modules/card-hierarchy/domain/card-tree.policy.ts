import type { CardState } from '../contracts/card-hierarchy.api.js';
import { CARD_STATES } from '../contracts/card-hierarchy.api.js';
import { CardCycleError, CardTooDeepError, TopLevelCardError } from './card.errors.js';

export function isCardState(value: unknown): value is CardState {
  return typeof value === 'string' && (CARD_STATES as readonly string[]).includes(value);
}

/** A card may not move under itself or one of its descendants. */
export function assertNoCycle(cardId: number, newParentId: number, newParentAncestors: number[]): void {
  if (newParentId === cardId || newParentAncestors.includes(cardId)) throw new CardCycleError();
}

/**
 * No card deeper than `max` (the top-level card is at 0). A subtree's
 * archive, restore and move write each of its cards' paths, `depth` ids
 * each: a chain of 5 000 cards took 18-23 s to move or restore, and one
 * of about 8 000 would never finish within the statement timeout.
 */
export function assertDepthAllowed(depth: number, max: number): void {
  if (depth > max) throw new CardTooDeepError(max);
}

/** The top-level card stays where it is and cannot be deleted or archived. */
export function assertNotTopLevel(card: { parentId: number | null }, action: string): void {
  if (card.parentId === null) throw new TopLevelCardError(action);
}

/** Clamps a requested 0-based position into [0, max]; no position → last. */
export function targetPosition(requested: number | undefined, max: number): number {
  if (requested === undefined) return max;
  return Math.min(Math.max(0, requested), max);
}
