/** A card in a group, at `position` in that group's column (dense, 0-based). */
export class CardMembership {
  cardId: number;

  groupId: number;

  /** Copied from the group so one-group-per-card checks and type-wide removals read one index. */
  typeId: number;

  position: number;

  createdAt: Date;
}
