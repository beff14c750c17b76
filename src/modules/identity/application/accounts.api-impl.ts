import { Injectable } from '@nestjs/common';
import { AccountsApi, type Account, type SignUpInput } from '../contracts/accounts.api.js';
import type { User } from '../domain/user.entity.js';
import { UsersRepository } from '../infrastructure/users.repository.js';
import { UsersService } from './users.service.js';

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
  ) {
    super();
  }

  async signUp(input: SignUpInput): Promise<Account> {
    return toAccount(await this.users.signUp(input));
  }

  async logIn(login: string, password: string): Promise<Account | null> {
    const user = await this.users.logIn(login, password);
    return user ? toAccount(user) : null;
  }

  async getAccount(userId: number): Promise<Account | null> {
    const user = await this.repo.findById(userId);
    return user ? toAccount(user) : null;
  }
}
