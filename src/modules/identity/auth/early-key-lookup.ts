import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiKeysService, type AuthenticatedKey } from '../application/api-keys.service.js';
import { soleApiKey } from './credentials.js';

interface StartedLookup {
  key: string;
  found: Promise<AuthenticatedKey | null>;
}

/**
 * The API key of a request, looked up (and its hit counted) as soon as the
 * request arrives, so that the round trip to the database runs while the
 * body is read and parsed and the route is found, instead of after. The
 * strategies take that lookup rather than start their own
 * (`authenticate`); a request that never reaches the guard (a malformed
 * body, an unknown route) has still counted its hit, as a request made with
 * that key. The guard decides as before: the lookup only answers sooner
 * (docs/PERFORMANCE.md, issue 15, tenth pass).
 */
@Injectable()
export class EarlyKeyLookup {
  private readonly started = new WeakMap<Request, StartedLookup>();

  constructor(private readonly keys: ApiKeysService) {}

  /** Express middleware for the API's routes, before the body parsers. */
  middleware() {
    return (req: Request, _res: Response, next: NextFunction): void => {
      const key = soleApiKey(req);
      if (key !== undefined) {
        const found = this.keys.authenticate(key);
        // Awaited by the strategy, or by no one when the request ends before
        // the guard: a database failure must not become an unhandled rejection.
        found.catch(() => undefined);
        this.started.set(req, { key, found });
      }
      next();
    };
  }

  /**
   * The lookup of `key` for `req`: the one started when it arrived, taken
   * once, or else a new one.
   */
  authenticate(req: Request, key: string): Promise<AuthenticatedKey | null> {
    const started = this.started.get(req);
    if (started === undefined || started.key !== key) return this.keys.authenticate(key);
    this.started.delete(req);
    return started.found;
  }
}
