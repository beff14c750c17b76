import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { BasicStrategy } from 'passport-http';
import type { Actor } from '../../../shared/domain/actor.js';
import type { AuthenticatedKey } from '../application/api-keys.service.js';
import { basicUsername } from './credentials.js';
import { EarlyKeyLookup } from './early-key-lookup.js';

export const API_KEY_BASIC = 'api-key-basic';

/**
 * HTTP Basic with the API key as username and an empty password (the spec's
 * form), or the key alone with no colon (what the original's clients send,
 * DESIGN.md §3). passport-http refuses both before calling `validate`, so
 * `authenticate` reads the header itself and keeps the strategy's challenge.
 */
@Injectable()
export class ApiKeyBasicStrategy extends PassportStrategy(BasicStrategy, API_KEY_BASIC) {
  constructor(private readonly keys: EarlyKeyLookup) {
    super({ realm: 'cardwork' });
  }

  override authenticate(req: Request): void {
    const self = this as unknown as {
      success(user: Actor, info: AuthenticatedKey): void;
      fail(challenge?: string): void;
      error(err: unknown): void;
      _challenge(): string;
    };
    const key = basicUsername(req.headers.authorization);
    if (key === undefined) return self.fail(self._challenge());
    this.keys.authenticate(req, key).then(
      (found) => (found ? self.success(found.actor, found) : self.fail(self._challenge())),
      (err: unknown) => self.error(err),
    );
  }

  /** Unused: `authenticate` above reads the header itself; passport's mixin wants the method. */
  validate(): null {
    return null;
  }
}
