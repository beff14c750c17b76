import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import type { Actor } from '../../../shared/domain/actor.js';
import { ApiKeysService, type AuthenticatedKey } from '../application/api-keys.service.js';

export const API_KEY_HEADER = 'api-key-header';

/** `X-Api-Key: <key>`. */
@Injectable()
export class ApiKeyHeaderStrategy extends PassportStrategy(HeaderAPIKeyStrategy, API_KEY_HEADER) {
  constructor(private readonly keys: ApiKeysService) {
    super({ header: 'X-Api-Key', prefix: '' }, false);
  }

  /** `[actor, info]`: passport hands `info` (the counted rate-limit hit) to the guard as `req.authInfo`. */
  async validate(key: string): Promise<[Actor, AuthenticatedKey] | null> {
    const found = await this.keys.authenticate(key);
    return found ? [found.actor, found] : null;
  }
}
