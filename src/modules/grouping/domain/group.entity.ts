import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A group of a type, scoped at a card: it is available to the cards under
 * that card (project-wide groups are scoped at the top-level card).
 */
@Entity({ schema: 'grouping', name: 'groups' })
export class Group {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'bigint' })
  typeId: number;

  @Column({ type: 'bigint' })
  projectId: number;

  @Column({ type: 'bigint' })
  organizationId: number;

  /** The scope: the card this group is available under. */
  @Column({ type: 'bigint' })
  cardId: number;

  @Column({ type: 'text' })
  title: string;

  /** Place among the groups of the same type and scope (dense, 0-based). */
  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'bigint', nullable: true })
  createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** A card may join a group scoped at one of its ancestors (it must be under the scope card). */
  isAvailableTo(card: { ancestorIds: number[] }): boolean {
    return card.ancestorIds.includes(this.cardId);
  }
}
