/**
 * A group of a type, scoped at a card: it is available to the cards under
 * that card (project-wide groups are scoped at the top-level card).
 */
export class Group {
  id: number;

  typeId: number;

  projectId: number;

  organizationId: number;

  /** The scope: the card this group is available under. */
  cardId: number;

  title: string;

  /** Place among the groups of the same type and scope (dense, 0-based). */
  position: number;

  createdBy: number | null;

  createdAt: Date;

  /** A card may join a group scoped at one of its ancestors (it must be under the scope card). */
  isAvailableTo(card: { ancestorIds: number[] }): boolean {
    return card.ancestorIds.includes(this.cardId);
  }
}
