import { Injectable } from '@nestjs/common';
import {
  IdentityAdminApi,
  type ApiKeySummary,
  type CreatedUser,
  type NewUserInput,
} from '../contracts/identity-admin.api.js';
import type { User } from '../domain/user.entity.js';
import { ApiKeysService, toApiKeyView } from './api-keys.service.js';
import { UsersService } from './users.service.js';

@Injectable()
export class IdentityAdminApiImpl extends IdentityAdminApi {
  constructor(
    private readonly users: UsersService,
    private readonly keys: ApiKeysService,
  ) {
    super();
  }

  async createUser(input: NewUserInput): Promise<CreatedUser> {
    const u = await this.users.create(input);
    return { id: Number(u.id), username: u.username, email: u.email };
  }

  async createApiKey(user: string | number, name = ''): Promise<{ apiKey: string; key: ApiKeySummary }> {
    const u = await this.find(user);
    const { key, record } = await this.keys.create(Number(u.id), name);
    return { apiKey: key, key: toApiKeyView(record) };
  }

  async listApiKeys(user: string | number): Promise<ApiKeySummary[]> {
    const u = await this.find(user);
    return (await this.keys.list(Number(u.id))).map(toApiKeyView);
  }

  async revokeApiKey(user: string | number, keyId: number): Promise<ApiKeySummary> {
    const u = await this.find(user);
    return toApiKeyView(await this.keys.revoke(Number(u.id), keyId));
  }

  private find(user: string | number): Promise<User> {
    if (typeof user === 'number') return this.users.get(user);
    return /^\d+$/.test(user) ? this.users.get(Number(user)) : this.users.getByUsername(user);
  }
}
