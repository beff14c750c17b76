import { Injectable } from '@nestjs/common';
import { RateLimitedError } from '../../../shared/domain/domain-error.js';
import { AccountsApi, type Account, type SignUpInput } from '../contracts/accounts.api.js';
import type { User } from '../domain/user.entity.js';
import { RateLimitStore } from '../infrastructure/rate-limit.store.js';
import { UsersRepository } from '../infrastructure/users.repository.js';
import { UsersService } from './users.service.js';

/** Password guesses allowed per minute, per address and per account named (counted in PostgreSQL, for every instance). */
const LOGIN_ATTEMPTS_PER_MINUTE = 20;

const toAccount = (u: User): Account => ({
  id: Number(u.id),
  username: u.username,
  email: u.email,
  displayName: u.displayName,
  isAdmin: u.isAdmin,
});

@Injectable()
export class AccountsApiImpl extends AccountsApi {
  constructor(
    private readonly users: UsersService,
    private readonly repo: UsersRepository,
    private readonly limits: RateLimitStore,
  ) {
    super();
  }

  async signUp(input: SignUpInput): Promise<Account> {
    return toAccount(await this.users.signUp(input));
  }

  async logIn(login: string, password: string, address: string): Promise<Account | null> {
    for (const key of [`login-address:${address}`, `login-account:${String(login).trim().toLowerCase()}`]) {
      const attempt = await this.limits.hit(key, LOGIN_ATTEMPTS_PER_MINUTE, 60);
      if (!attempt.allowed) throw new RateLimitedError(attempt.resetSeconds);
    }
    const user = await this.users.logIn(login, password);
    return user ? toAccount(user) : null;
  }

  async getAccount(userId: number): Promise<Account | null> {
    const user = await this.repo.findById(userId);
    return user ? toAccount(user) : null;
  }
}
