import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { ApiKey } from '../domain/api-key.entity.js';

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.manager.getRepository(ApiKey);
  }

  findActiveByHash(keyHash: string): Promise<ApiKey | null> {
    return this.repo.findOneBy({ keyHash, revokedAt: IsNull() });
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
