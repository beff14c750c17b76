import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { AccessMode, Role } from '../contracts/workspace.api.js';

@Entity({ schema: 'workspace', name: 'memberships' })
export class Membership {
  @PrimaryColumn({ type: 'bigint' })
  organizationId: number;

  @PrimaryColumn({ type: 'bigint' })
  userId: number;

  @Column({ type: 'text' })
  role: Role;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}

export const ROLES: readonly Role[] = ['admin', 'member', 'viewer'];

/** Whether a role may do what a mode asks. */
export function roleAllows(role: Role, mode: AccessMode): boolean {
  if (mode === 'read') return true;
  if (mode === 'write') return role === 'admin' || role === 'member';
  return role === 'admin';
}
