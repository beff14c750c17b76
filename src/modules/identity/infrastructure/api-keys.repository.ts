import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { ApiKey } from '../domain/api-key.entity.js';

export interface ActiveKey {
  id: number;
  lastUsedAt: Date | null;
  userId: number;
  username: string;
  isAdmin: boolean;
}

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.manager.getRepository(ApiKey);
  }

  /** An unrevoked key by hash together with its user, in one query (authentication of every request). */
  async findActiveWithUser(keyHash: string): Promise<ActiveKey | null> {
    const rows = (await this.uow.manager.query(
      `SELECT k.id, k.last_used_at, u.id AS user_id, u.username, u.is_admin
         FROM identity.api_keys k JOIN identity.users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    )) as Array<{ id: number | string; last_used_at: Date | string | null; user_id: number | string; username: string; is_admin: boolean }>;
    const r = rows[0];
    if (!r) return null;
    return {
      id: Number(r.id),
      lastUsedAt: r.last_used_at === null ? null : new Date(r.last_used_at),
      userId: Number(r.user_id),
      username: r.username,
      isAdmin: r.is_admin,
    };
  }

  listForUser(userId: number): Promise<ApiKey[]> {
    return this.repo.find({ where: { userId }, order: { id: 'ASC' } });
  }

  findForUser(id: number, userId: number): Promise<ApiKey | null> {
    return this.repo.findOneBy({ id, userId });
  }

  save(key: ApiKey): Promise<ApiKey> {
    return this.repo.save(key);
  }

  async touch(id: number, at: Date): Promise<void> {
    await this.repo.update({ id }, { lastUsedAt: at });
  }
}
