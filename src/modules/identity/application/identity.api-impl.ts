import { Injectable } from '@nestjs/common';
import { IdentityApi, type UserSummary } from '../contracts/identity.api.js';
import type { User } from '../domain/user.entity.js';
import { UsersRepository } from '../infrastructure/users.repository.js';

const summary = (u: User): UserSummary => ({ id: Number(u.id), username: u.username, displayName: u.displayName });

@Injectable()
export class IdentityApiImpl extends IdentityApi {
  constructor(private readonly users: UsersRepository) {
    super();
  }

  async findUsers(ids: number[]): Promise<UserSummary[]> {
    return (await this.users.findByIds([...new Set(ids)])).map(summary);
  }

  async resolveUser(ref: number | string): Promise<UserSummary | null> {
    let user: User | null = null;
    if (typeof ref === 'number') user = Number.isSafeInteger(ref) && ref > 0 ? await this.users.findById(ref) : null;
    else if (/^@[A-Za-z0-9._-]{1,64}$/.test(ref)) user = await this.users.findByUsername(ref.slice(1));
    else if (/^\d{1,15}$/.test(ref)) user = await this.users.findById(Number(ref));
    return user ? summary(user) : null;
  }

  async usersNamed(usernames: string[], names: string[]): Promise<UserSummary[]> {
    if (!usernames.length && !names.length) return [];
    return (await this.users.findByNames(usernames, names)).map(summary);
  }
}
