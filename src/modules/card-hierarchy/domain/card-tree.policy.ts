import type { CardState } from '../contracts/card-hierarchy.api.js';
import { CARD_STATES } from '../contracts/card-hierarchy.api.js';
import { CardCycleError, TopLevelCardError } from './card.errors.js';

export function isCardState(value: unknown): value is CardState {
  return typeof value === 'string' && (CARD_STATES as readonly string[]).includes(value);
}

/** A card may not move under itself or one of its descendants. */
export function assertNoCycle(cardId: number, newParentId: number, newParentAncestors: number[]): void {
  if (newParentId === cardId || newParentAncestors.includes(cardId)) throw new CardCycleError();
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
