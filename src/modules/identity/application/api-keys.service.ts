import { longerThan } from '../../../shared/domain/safe-text.js';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { ApiKey } from '../domain/api-key.entity.js';
import { ApiKeyLimitError, ApiKeyNotFoundError, InvalidUserError } from '../domain/identity.errors.js';
import { hashApiKey, looksLikeApiKey, newApiKey } from '../domain/secrets.js';
import { DECEPTIVE_NAME_MESSAGE, hasDeceptiveCharacter } from '../domain/visible-name.js';
import { ApiKeysRepository } from '../infrastructure/api-keys.repository.js';
import { hashLimitKey, toHit, type RateLimitHit } from '../infrastructure/rate-limit.store.js';

export interface ApiKeyView {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function toApiKeyView(k: ApiKey): ApiKeyView {
  return {
    id: Number(k.id),
    name: k.name,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}

/** `last_used_at` is written at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000;
/** Length of a rate-limit window (RATE_LIMIT_PER_MINUTE). */
export const RATE_WINDOW_SECONDS = 60;

/** A key that authenticated, and its request counted against the per-credential limit. */
export interface AuthenticatedKey {
  /** The key's row (`isLive` reads it again). */
  keyId: number;
  actor: Actor;
  rateLimit: RateLimitHit;
}

/** The window key of a credential (the same for every form it is sent in). */
export function credentialWindowKey(credential: string): string {
  return `credential:${credential}`;
}

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: ApiKeysRepository,
    private readonly config: AppConfig,
  ) {}

  /**
   * Creates a key; the returned `key` is the only time it is ever shown. 409
   * once the user holds API_KEYS_PER_USER_MAX live keys. Deletes the user's
   * keys revoked over 30 days ago first (`deleteLongRevoked`).
   */
  create(userId: number, name = ''): Promise<{ key: string; record: ApiKey }> {
    checkKeyName(name);
    return this.uow.run(async () => {
      const max = this.config.apiKeysPerUserMax;
      if ((await this.keys.lockUserCountLive(userId)) >= max) throw new ApiKeyLimitError(max);
      await this.keys.deleteLongRevoked(userId);
      const secret = newApiKey();
      const record = new ApiKey();
      record.userId = userId;
      record.name = name;
      record.prefix = secret.prefix;
      record.keyHash = secret.hash;
      record.lastUsedAt = null;
      record.revokedAt = null;
      return { key: secret.key, record: await this.keys.save(record) };
    });
  }

  list(userId: number): Promise<ApiKey[]> {
    return this.keys.listForUser(userId);
  }

  revoke(userId: number, keyId: number): Promise<ApiKey> {
    return this.uow.run(async () => {
      const key = await this.keys.findForUser(keyId, userId);
      if (!key) throw new ApiKeyNotFoundError();
      if (!key.revokedAt) {
        key.revokedAt = new Date();
        await this.keys.save(key);
      }
      return key;
    });
  }

  /**
   * The actor a key stands for, or null for an unknown or revoked key. The
   * request is counted against the key's rate limit in the same statement
   * (authentication and limit are one round trip on every API call).
   */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    if (!looksLikeApiKey(key)) return null;
    const found = await this.keys.findActiveCounting(hashApiKey(key), hashLimitKey(credentialWindowKey(key)), RATE_WINDOW_SECONDS);
    if (!found) return null;
    const { key: record, window } = found;
    const now = new Date();
    if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      await this.keys.touch(record.id, now);
    }
    return {
      keyId: record.id,
      actor: { userId: record.userId, username: record.username, isAdmin: record.isAdmin, scopes: null },
      rateLimit: toHit(window, this.config.rateLimitPerMinute),
    };
  }

  /**
   * Whether a key that `authenticate` found is still not revoked: read
   * again, without counting a hit or touching it (its request was counted
   * once already). A user's name and admin flag never change after creation
   * and users are not deleted, so the rest of the actor still stands.
   */
  async isLive(found: AuthenticatedKey): Promise<boolean> {
    const record = await this.keys.findForUser(found.keyId, found.actor.userId);
    return record !== null && record.revokedAt === null;
  }
}

/** A key's name is shown on the account page: at most 200 characters, none that hides or reorders text. */
function checkKeyName(name: unknown): void {
  if (typeof name !== 'string' || longerThan(name, 200)) {
    throw new InvalidUserError('name must be a string of at most 200 characters', [{ field: 'name', message: 'must be at most 200 characters' }]);
  }
  if (hasDeceptiveCharacter(name)) throw new InvalidUserError(`name ${DECEPTIVE_NAME_MESSAGE}`, [{ field: 'name', message: DECEPTIVE_NAME_MESSAGE }]);
}
