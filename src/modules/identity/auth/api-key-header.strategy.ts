import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import type { Actor } from '../../../shared/domain/actor.js';
import type { AuthenticatedKey } from '../application/api-keys.service.js';
import { EarlyKeyLookup } from './early-key-lookup.js';
import { apiKeyHeader } from './credentials.js';

export const API_KEY_HEADER = 'api-key-header';

/**
 * `X-Api-Key: <key>`. `authenticate` reads the header itself (as
 * passport-headerapikey would) because the lookup it takes belongs to the
 * request (`EarlyKeyLookup`), and the request does not reach `validate`
 * under Nest's strategy wrapper.
 */
@Injectable()
export class ApiKeyHeaderStrategy extends PassportStrategy(HeaderAPIKeyStrategy, API_KEY_HEADER) {
  constructor(private readonly keys: EarlyKeyLookup) {
    super({ header: 'X-Api-Key', prefix: '' }, false);
  }

  override authenticate(req: Request): void {
    const self = this as unknown as {
      success(user: Actor, info: AuthenticatedKey): void;
      fail(challenge?: unknown, status?: number): void;
      error(err: unknown): void;
    };
    const key = apiKeyHeader(req);
    if (!key) return self.fail();
    this.keys.authenticate(req, key).then(
      (found) => (found ? self.success(found.actor, found) : self.fail()),
      (err: unknown) => self.error(err),
    );
  }

  /** Unused: `authenticate` above reads the header itself; passport's mixin wants the method. */
  validate(): null {
    return null;
  }
}
