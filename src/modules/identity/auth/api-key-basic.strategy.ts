import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { BasicStrategy } from 'passport-http';
import type { Actor } from '../../../shared/domain/actor.js';
import { ApiKeysService, type AuthenticatedKey } from '../application/api-keys.service.js';

export const API_KEY_BASIC = 'api-key-basic';

/**
 * HTTP Basic with the API key as username and an empty password (the spec's
 * form), or the key alone with no colon (what the original's clients send,
 * DESIGN.md §3). passport-http refuses both before calling `validate`, so
 * `authenticate` reads the header itself and keeps the strategy's challenge.
 */
@Injectable()
export class ApiKeyBasicStrategy extends PassportStrategy(BasicStrategy, API_KEY_BASIC) {
  constructor(private readonly keys: ApiKeysService) {
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
    this.keys.authenticate(key).then(
      (found) => (found ? self.success(found.actor, found) : self.fail(self._challenge())),
      (err: unknown) => self.error(err),
    );
  }

  /** Unused: `authenticate` above reads the header itself; passport's mixin wants the method. */
  validate(): null {
    return null;
  }
}

/**
 * The key a Basic credential carries: the username when the password is
 * empty (`key:`), or the whole decoded value when it has no colon (`key`);
 * undefined otherwise.
 */
export function basicUsername(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return decoded === '' ? undefined : decoded;
  if (colon === 0) return undefined;
  const password = decoded.slice(colon + 1);
  return password === '' ? decoded.slice(0, colon) : undefined;
}
