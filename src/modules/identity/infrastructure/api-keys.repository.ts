import { Injectable } from '@nestjs/common';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { ApiKey } from '../domain/api-key.entity.js';
import { windowUpsertSql, type WindowRow } from './rate-limit.store.js';

type ActiveKeyRow = { id: number | string; last_used_at: Date | string | null; user_id: number | string; username: string; is_admin: boolean };

const ACTIVE_KEY_SQL = `SELECT k.id, k.last_used_at, u.id AS user_id, u.username, u.is_admin
         FROM identity.api_keys k JOIN identity.users u ON u.id = k.user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`;

/** Every API-key request runs it: a named statement (shared/persistence/prepared-statements.ts). */
const ACTIVE_KEY_COUNTING_SQL = prepared(
  `WITH k AS (${ACTIVE_KEY_SQL}),
        hit AS (${windowUpsertSql('$2', '$3', 'FROM k')})
   SELECT k.*, hit.hits, hit.reset_seconds FROM k CROSS JOIN hit`,
);

/**
 * How long a revoked key stays listed (with its `revoked_at`, last use and
 * name) before it is deleted (README, OpenAPI of `GET /me/api-keys`).
 */
export const REVOKED_KEY_RETENTION = '30 days';
/** Long-revoked keys deleted at most per key creation (which adds one). */
const REVOKED_KEY_DELETE_BATCH = 100;

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

  /**
   * Authentication of every API request: the key with its user and, in the
   * same statement, one hit counted in the rate-limit window `windowKey` —
   * only when the key is valid, so unknown keys never create windows (their
   * failures are counted per address instead).
   */
  async findActiveCounting(
    keyHash: string,
    windowKey: string,
    windowSeconds: number,
  ): Promise<{ key: ActiveKey; window: WindowRow } | null> {
    const rows = (await this.uow.manager.query(
      ACTIVE_KEY_COUNTING_SQL,
      [keyHash, windowKey, windowSeconds],
    )) as Array<ActiveKeyRow & WindowRow>;
    const r = rows[0];
    return r ? { key: toActiveKey(r), window: { hits: r.hits, reset_seconds: r.reset_seconds } } : null;
  }

  /** The user's keys, live ones and those revoked within the retention (`REVOKED_KEY_RETENTION`). */
  listForUser(userId: number): Promise<ApiKey[]> {
    return this.kept(userId).orderBy('k.id', 'ASC').getMany();
  }

  /** One of the user's keys, as `listForUser` shows them (a key revoked longer ago is gone). */
  findForUser(id: number, userId: number): Promise<ApiKey | null> {
    return this.kept(userId).andWhere('k.id = :id', { id }).getOne();
  }

  private kept(userId: number) {
    return this.repo
      .createQueryBuilder('k')
      .where('k.userId = :userId', { userId })
      .andWhere(`(k.revokedAt IS NULL OR k.revokedAt > now() - interval '${REVOKED_KEY_RETENTION}')`);
  }

  /**
   * Deletes a bounded batch of the user's keys revoked longer ago than the
   * retention, which nothing reads any more (authentication never reads a
   * revoked key, the listing stops showing it). Run by each key creation, the
   * one way a user adds rows, so a user's rows stay those live and those
   * revoked within the retention.
   */
  async deleteLongRevoked(userId: number): Promise<void> {
    await this.uow.manager.query(
      `DELETE FROM identity.api_keys
        WHERE id IN (SELECT id FROM identity.api_keys
                      WHERE user_id = $1 AND revoked_at <= now() - interval '${REVOKED_KEY_RETENTION}'
                      ORDER BY revoked_at LIMIT ${REVOKED_KEY_DELETE_BATCH})`,
      [userId],
    );
  }

  /**
   * The user's live keys, counted once the user's row is locked (`FOR NO KEY
   * UPDATE`, which only another key creation waits for: foreign keys take
   * `KEY SHARE`) until the transaction ends, so two creations racing are
   * counted one after the other. Two statements: under READ COMMITTED the
   * count's snapshot is taken after the lock is granted.
   */
  async lockUserCountLive(userId: number): Promise<number> {
    await this.uow.manager.query(`SELECT 1 FROM identity.users WHERE id = $1 FOR NO KEY UPDATE`, [userId]);
    const rows = (await this.uow.manager.query(
      `SELECT count(*)::int AS live FROM identity.api_keys WHERE user_id = $1 AND revoked_at IS NULL`,
      [userId],
    )) as Array<{ live: number }>;
    return rows[0].live;
  }

  save(key: ApiKey): Promise<ApiKey> {
    return this.repo.save(key);
  }

  async touch(id: number, at: Date): Promise<void> {
    await this.repo.update({ id }, { lastUsedAt: at });
  }
}

function toActiveKey(r: ActiveKeyRow): ActiveKey {
  return {
    id: Number(r.id),
    lastUsedAt: r.last_used_at === null ? null : new Date(r.last_used_at),
    userId: Number(r.user_id),
    username: r.username,
    isAdmin: r.is_admin,
  };
}
