import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A card in a group, at `position` in that group's column (dense, 0-based). */
@Entity({ schema: 'grouping', name: 'memberships' })
export class CardMembership {
  @PrimaryColumn({ type: 'bigint' })
  cardId: number;

  @PrimaryColumn({ type: 'bigint' })
  groupId: number;

  /** Copied from the group so one-group-per-card checks and type-wide removals read one index. */
  @Column({ type: 'bigint' })
  typeId: number;

  @Column({ type: 'integer' })
  position: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
