import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { CardState } from '../contracts/card-hierarchy.api.js';

/**
 * A card. Tree columns (`ancestorIds`, `depth`, `position`, `hidden`) are kept
 * consistent by CardTreeRepository under row locks; see docs/card-tree.md.
 */
@Entity({ schema: 'cards', name: 'cards' })
export class Card {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'bigint' })
  projectId: number;

  @Column({ type: 'bigint' })
  organizationId: number;

  @Column({ type: 'bigint', nullable: true })
  parentId: number | null;

  @Column({ type: 'bigint', array: true })
  ancestorIds: number[];

  @Column({ type: 'integer' })
  ref: number;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text' })
  state: CardState;

  @Column({ type: 'boolean' })
  isArchived: boolean;

  /** Archived, or under an archived card: left out of listings. */
  @Column({ type: 'boolean' })
  hidden: boolean;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'integer' })
  depth: number;

  @Column({ type: 'bigint', nullable: true })
  modelId: number | null;

  @Column({ type: 'bigint', nullable: true })
  createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
