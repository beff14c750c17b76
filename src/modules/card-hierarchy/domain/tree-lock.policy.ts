import { CardNotFoundError, InvalidCardInputError } from './card.errors.js';

/** Positions `from` to `to` (inclusive; `to` null: to the last) among the children of `parentId`. */
export interface SiblingRange {
  parentId: number;
  from: number;
  to: number | null;
}

/**
 * The card rows a tree write takes in step 1 of the lock order: cards named
 * by id, the whole subtree of a card (the card included), and the siblings
 * whose positions it will shift. Every row the write changes is in it, so
 * the write waits for no card row after step 1.
 */
export interface TreeLockSet {
  ids: number[];
  subtreeOf?: number;
  siblings: SiblingRange[];
}

/** Where a card is, as a plan reads it. */
export interface TreePlace {
  parentId: number | null;
  position: number;
  ancestorIds: number[];
}

/**
 * The set a write locks, from where the cards it names are (`place`:
 * undefined when gone); throws when the write cannot go on. Planned again
 * from the locked rows until the set stops changing (TreeLocksService).
 */
export type TreeLockPlan = (place: (id: number) => TreePlace | undefined) => TreeLockSet;

/** An archive or a restore: the card's subtree (its `hidden` flags are recomputed). */
export function subtreeLocks(cardId: number): TreeLockPlan {
  return () => ({ ids: [cardId], subtreeOf: cardId, siblings: [] });
}

/** A deletion: the parent, the subtree (the cascade deletes it), the later siblings (the gap closes). */
export function deletionLocks(cardId: number): TreeLockPlan {
  return (place) => {
    const card = place(cardId);
    if (!card) throw new CardNotFoundError();
    const parentId = card.parentId!;
    return { ids: [parentId, cardId], subtreeOf: cardId, siblings: [{ parentId, from: card.position + 1, to: null }] };
  };
}

/**
 * A relocation under `parentId` (the same parent or another), to `position`
 * (as requested: clamping to the siblings' range only ever shortens the
 * ranges) or last: the card and its parent; to another parent also the new
 * parent, the subtree (its paths are rewritten), the old siblings after the
 * card (their gap closes) and the new ones from the slot on (a gap opens;
 * last opens none); under the same parent the siblings between the two
 * slots.
 *
 * Not the new parent's ancestors: the card's subtree and the new parent
 * held are what keeps a cycle from forming. A move that would put the new
 * parent under the card must move the new parent or one of its ancestors
 * (so lock the new parent, in its subtree) under a card of this card's
 * subtree (locked here): the two wait for each other, and the second checks
 * the new parent's ancestry as the first left it. The same holds for an
 * archive of an ancestor (its subtree holds the new parent) changing what
 * the move hides. Locking the whole chain, as this did, queued every move
 * of a project on its top-level card (docs/PERFORMANCE.md, bench:storm).
 */
export function moveLocks(cardId: number, parentId: number, position: number | undefined): TreeLockPlan {
  return (place) => {
    const card = place(cardId);
    if (!card) throw new CardNotFoundError();
    const oldParentId = card.parentId!;
    if (oldParentId === parentId) return { ids: [cardId, parentId], siblings: between(parentId, card.position, position) };
    if (!place(parentId)) throw new InvalidCardInputError('parent_id', 'must be a card of the same project');
    const opened = position === undefined ? [] : [{ parentId, from: position, to: null }];
    return {
      ids: [cardId, oldParentId, parentId],
      subtreeOf: cardId,
      siblings: [{ parentId: oldParentId, from: card.position + 1, to: null }, ...opened],
    };
  };
}

/** The siblings a card passes going from slot `from` to `to` under the same parent. */
function between(parentId: number, from: number, to: number | undefined): SiblingRange[] {
  if (to === undefined || to === from) return [];
  return to < from ? [{ parentId, from: to, to: from - 1 }] : [{ parentId, from: from + 1, to }];
}
