import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ schema: 'workspace', name: 'organizations' })
export class Organization {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'bigint' })
  createdBy: number;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
