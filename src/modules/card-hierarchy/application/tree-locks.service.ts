import { Injectable } from '@nestjs/common';
import { TreeBusyError } from '../domain/card.errors.js';
import type { TreeLockPlan, TreePlace } from '../domain/tree-lock.policy.js';
import { highest, TreeLockQueries, type LockedCard, type LockedRows } from '../infrastructure/tree-locks.queries.js';

/** Rounds before giving up on a set that keeps changing (a subtree that keeps growing). */
const MAX_ROUNDS = 20;

/**
 * Step 1 of the lock order for the tree's writes: every card row the write
 * will change (its sibling position shifts included) locked FOR UPDATE, and
 * never a wait for a card below one already held, so two tree writes cannot
 * deadlock on card rows and none waits for a card after step 1.
 */
@Injectable()
export class TreeLocksService {
  constructor(private readonly queries: TreeLockQueries) {}

  /**
   * Locks `plan`'s set as seen from `seen` (the named cards as read before
   * any lock) in one ascending statement. A set is only known for sure once
   * the rows that decide it are held (a parent's children, a subtree, where
   * a named card is), so it is planned again from the locked rows and read
   * afresh until no card is missing. A missing card above every card held
   * is waited for, still in ascending order; one below is taken only if
   * free (NOWAIT: otherwise 55P03, and the unit of work runs the whole unit
   * again), since waiting for it could close a cycle. "Held" counts the
   * rows a statement locked but dropped (`LockedRows.ceiling`): a row
   * waited for that left the set meanwhile stays locked, and waiting for a
   * card below it closed a cycle with a write that took that card first.
   */
  async lock(plan: TreeLockPlan, seen: ReadonlyMap<number, TreePlace>): Promise<Map<number, LockedCard>> {
    const held = new Map<number, LockedCard>();
    let ceiling = -Infinity;
    const take = ({ cards, ceiling: top }: LockedRows) => {
      for (const card of cards) held.set(card.id, card);
      // Unknown (nothing came back, yet rows may be locked): wait for nothing more.
      ceiling = Math.max(ceiling, top ?? Infinity, highest(held.keys()));
    };
    take(await this.queries.lock(plan((id) => seen.get(id)), { wait: true }));
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const set = plan((id) => placeOf(held.get(id)));
      const missing = (await this.queries.read(set)).filter((id) => !held.has(id));
      if (!missing.length) return held;
      take(await this.queries.lock(set, { only: missing, wait: lowest(missing) > ceiling }));
    }
    throw new TreeBusyError();
  }
}

function lowest(ids: number[]): number {
  return ids.reduce((a, b) => Math.min(a, b), Infinity);
}

function placeOf(card: LockedCard | undefined): TreePlace | undefined {
  return card && { parentId: card.parentId, position: card.position, ancestorIds: card.ancestorIds ?? [] };
}
