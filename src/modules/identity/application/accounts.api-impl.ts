import { Injectable } from '@nestjs/common';
import { RateLimitedError } from '../../../shared/domain/domain-error.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { AccountsApi, type Account, type SignUpInput } from '../contracts/accounts.api.js';
import type { User } from '../domain/user.entity.js';
import { RateLimitStore } from '../infrastructure/rate-limit.store.js';
import { UsersRepository } from '../infrastructure/users.repository.js';
import { UsersService } from './users.service.js';

/** Password guesses allowed per minute, per address and per account (counted in PostgreSQL, for every instance). */
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
    private readonly uow: UnitOfWork,
  ) {
    super();
  }

  async signUp(input: SignUpInput): Promise<Account> {
    return toAccount(await this.users.signUp(input));
  }

  async logIn(login: string, password: string, address: string): Promise<Account | null> {
    await this.countAttempt(`login-address:${address}`);
    const text = String(login).trim();
    const found = text.length <= 300 ? await this.repo.findByLogin(text) : null;
    await this.countAttempt(accountKey(found, text));
    const user = await this.users.checkPassword(found, password);
    return user ? toAccount(user) : null;
  }

  async changePassword(
    userId: number,
    currentPassword: string,
    newPassword: string,
    address: string,
    alongWithChange: () => Promise<void> = async () => undefined,
  ): Promise<boolean> {
    // The new password is judged whole (its account's names included) before the current one is
    // checked: a refusal after the check told a stolen session the password was right, changing nothing.
    const account = await this.repo.findById(userId);
    this.users.checkNewPassword(newPassword, account ?? undefined);
    // Counted and checked before the transaction: the limits' counts live outside any transaction
    // (a rollback keeps them), and the embedded database's one connection is the transaction's while it runs.
    await this.countAttempt(`login-address:${address}`);
    await this.countAttempt(accountCounter(userId));
    const user = await this.users.checkPassword(account, currentPassword);
    if (!user) return false;
    return this.uow.run(async () => {
      if (!(await this.users.replacePassword(user, newPassword))) return false;
      await alongWithChange();
      return true;
    });
  }

  private async countAttempt(key: string): Promise<void> {
    const attempt = await this.limits.hit(key, LOGIN_ATTEMPTS_PER_MINUTE, 60);
    if (!attempt.allowed) throw new RateLimitedError(attempt.resetSeconds);
  }

  async getAccount(userId: number): Promise<Account | null> {
    const user = await this.repo.findById(userId);
    return user ? toAccount(user) : null;
  }
}

const accountCounter = (userId: number) => `login-account:${userId}`;

/**
 * The counter of the account a login names: one per account, whichever of
 * its names was typed (keyed on the text, its user name and its email were
 * two counters, so twice the guesses). An unknown login counts under its
 * text as the lookup matches it (trimmed, any case), and answers as a known
 * one does. The account found is the one whose password is then checked:
 * one lookup.
 */
function accountKey(user: { id: number } | null, text: string): string {
  return user ? accountCounter(user.id) : `login-name:${text.toLowerCase()}`;
}
