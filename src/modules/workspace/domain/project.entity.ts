import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ schema: 'workspace', name: 'projects' })
export class Project {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'bigint' })
  organizationId: number;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'bigint', nullable: true })
  topLevelCardId: number | null;

  @Column({ type: 'bigint' })
  createdBy: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
