import { Injectable } from '@nestjs/common';
import { Sql } from '../../../shared/persistence/sql.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';

/** Advisory lock class of "memberships of one card" (the second key is the card id). */
const CARD_MEMBERSHIPS_LOCK = 0x47525043;

/**
 * Card-level locks of grouping's own use cases. Lock order of every grouping
 * transaction: cards (KEY SHARE, or NO KEY UPDATE for the cards it will
 * touch; ascending id) → the card's advisory lock → group type row → group
 * rows (ascending id) → writes → touching the cards.
 *
 * KEY SHARE is the lock our foreign keys take anyway. Taking it first means a
 * `cards` use case that holds the card FOR UPDATE (a tree write, which also
 * locks so the siblings whose positions it shifts) and then calls grouping
 * (relocate with group_id) is waited for before we hold any grouping lock.
 * Taking it after the group locks could deadlock with such a write: a card
 * that must be taken late is taken only if free (`wait: false`).
 * The card rows are card-hierarchy's, so the lock itself is taken through
 * `CardHierarchyApi.lockCardsShared` (same statement, ascending id order).
 */
@Injectable()
export class CardLocks {
  constructor(
    private readonly sql: Sql,
    private readonly hierarchy: CardHierarchyApi,
  ) {}

  keyShare(cardIds: number[], options: { wait?: boolean } = {}): Promise<void> {
    return this.hierarchy.lockCardsShared(cardIds, options);
  }

  /**
   * For cards the use case will mark changed (touch) at its end: the touch's
   * own lock (NO KEY UPDATE), taken in this first step instead of KEY SHARE.
   * KEY SHARE lets a value write's UPDATE of the card through, and the touch
   * would then wait for that write out of order (CardHierarchyApi.lockCardsToTouch).
   */
  toTouch(cardIds: number[], options: { wait?: boolean } = {}): Promise<void> {
    return this.hierarchy.lockCardsToTouch(cardIds, options);
  }

  /**
   * Serializes the membership changes of one card among grouping's own use
   * cases (KEY SHARE does not exclude itself); the steps `cards` composes after a tree write run
   * under the card's FOR UPDATE lock, which excludes both.
   */
  async memberships(cardId: number): Promise<void> {
    await this.sql.run(`SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483648)::int)`, [
      CARD_MEMBERSHIPS_LOCK,
      cardId,
    ]);
  }
}
