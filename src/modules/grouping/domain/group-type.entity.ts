import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A kind of grouping in a project (columns, labels); owns one `group_type` field. */
@Entity({ schema: 'grouping', name: 'group_types' })
export class GroupType {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'bigint' })
  projectId: number;

  @Column({ type: 'bigint' })
  organizationId: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'boolean' })
  oneGroupPerCard: boolean;

  /** The fields module's attribute of type group_type that shows this type's groups. */
  @Column({ type: 'bigint' })
  attributeId: number;

  @Column({ type: 'bigint', nullable: true })
  createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** Whether a card already in `currentGroupIds` of this type may also join `groupId`. */
  mayAlsoJoin(groupId: number, currentGroupIds: number[]): boolean {
    return !this.oneGroupPerCard || currentGroupIds.every((id) => id === groupId);
  }
}
