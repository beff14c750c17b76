/**
 * How a write may lock the cards its relationship values name, in the one
 * lock order (docs/ARCHITECTURE.md). A relationship row's foreign key holds
 * the card it names FOR KEY SHARE, which waits for a tree write holding that
 * card FOR UPDATE in its step 1. Taken as the row is written, after the
 * written card's lock (and in a creation after the counter row and groups),
 * that wait could close a cycle with a tree write that holds the named card
 * and waits for one of those. So the named cards are locked before any row
 * is written, ascending (`TeamReferences.lockTeamCards`), and waited for
 * only in order:
 *
 * - a write of an existing card's values in a unit of its own (`afterCard`)
 *   takes the named cards below that card before touching it, when it knows
 *   them then (planned before the unit, or learned by an earlier attempt),
 *   and waits for those above it after the touch, when the card is the one
 *   row it holds; one below it learned only after the touch is taken only
 *   if free (NOWAIT), and remembered, so that the unit, run again on the
 *   55P03, takes it before the card;
 * - writes in a caller's unit (a new card's values, an import's), which
 *   hold rows of later steps already: every named card only if free.
 */
export class RelationshipTargetLocks {
  private readonly below = new Set<number>();

  private constructor(
    private readonly cardId: number | null,
    /** The card's team: the only cards named that are locked (others are refused). */
    private organizationId?: number,
  ) {}

  /** A unit that touches `card` and holds nothing else; `named`: the cards its writes name, when known before it. */
  static afterCard(card: { id: number; organizationId?: number }, named: number[] = []): RelationshipTargetLocks {
    const locks = new RelationshipTargetLocks(card.id, card.organizationId);
    for (const id of named) if (id < card.id) locks.below.add(id);
    return locks;
  }

  /** Writes in a caller's unit, which may hold any step's rows: nothing named is waited for. */
  static inCallersUnit(): RelationshipTargetLocks {
    return new RelationshipTargetLocks(null);
  }

  /** The named cards of the team to lock before the card, ascending: in step 1, waiting. */
  get first(): { ids: number[]; organizationId: number } | undefined {
    if (!this.below.size || this.organizationId === undefined) return undefined;
    return { ids: [...this.below].sort((a, b) => a - b), organizationId: this.organizationId };
  }

  /**
   * `ids`, named by a card of team `organizationId` (the unit holds `first`
   * and the card by now), split into those to take only if free,
   * remembered for the unit's next attempt, and those it may wait for
   * (above the card, or held already).
   */
  split(ids: number[], organizationId: number): { ifFree: number[]; wait: number[] } {
    const cardId = this.cardId;
    if (cardId === null) return { ifFree: ids, wait: [] };
    this.organizationId = organizationId;
    const ifFree = ids.filter((id) => id < cardId && !this.below.has(id));
    const wait = ids.filter((id) => !ifFree.includes(id));
    for (const id of ifFree) this.below.add(id);
    return { ifFree, wait };
  }
}
