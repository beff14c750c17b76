import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An API key. Only its SHA-256 hash is stored; the key itself is shown once. */
@Entity({ schema: 'identity', name: 'api_keys' })
export class ApiKey {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'bigint' })
  userId: number;

  @Column({ type: 'text' })
  name: string;

  /** First characters of the key, shown in listings so a user can tell keys apart. */
  @Column({ type: 'text' })
  prefix: string;

  @Column({ type: 'text' })
  keyHash: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
