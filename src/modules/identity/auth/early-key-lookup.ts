import { Injectable, type INestApplicationContext } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiKeysService, type AuthenticatedKey } from '../application/api-keys.service.js';
import { soleApiKey } from './credentials.js';

/**
 * How long after it started an early lookup still stands for the key as it
 * is. An ordinary request reaches the guard tens of microseconds after its
 * head (its body came with it, docs/PERFORMANCE.md, tenth pass), so it never
 * waits this long; a body that takes longer came from a slow or stalling
 * client, for whom one more indexed read is nothing. A key revoked within
 * these 100 ms passes as a request already past the guard would.
 */
export const FRESH_LOOKUP_MS = 100;

interface StartedLookup {
  key: string;
  found: Promise<AuthenticatedKey | null>;
  /** `performance.now()` when the lookup was sent. */
  at: number;
}

/**
 * The API key of a request, looked up (and its hit counted) as soon as the
 * request arrives, so that the round trip to the database runs while the
 * body is read and parsed and the route is found, instead of after. The
 * strategies take that lookup rather than start their own
 * (`authenticate`); a request that never reaches the guard (a malformed
 * body, an unknown route) has still counted its hit, as a request made with
 * that key. The guard judges the key as it is when the guard runs: an early
 * answer older than FRESH_LOOKUP_MS (a body trickled in while the key was
 * revoked) is checked again (docs/PERFORMANCE.md, issue 15, tenth pass).
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
        this.started.set(req, { key, found, at: performance.now() });
      }
      next();
    };
  }

  /**
   * The lookup of `key` for `req`: the one started when it arrived, taken
   * once (checked again for revocation when it is no longer fresh), or else
   * a new one.
   */
  authenticate(req: Request, key: string): Promise<AuthenticatedKey | null> {
    const started = this.started.get(req);
    if (started === undefined || started.key !== key) return this.keys.authenticate(key);
    this.started.delete(req);
    if (performance.now() - started.at < FRESH_LOOKUP_MS) return started.found;
    return this.stillLive(started.found);
  }

  /** The early answer if its key is still not revoked; its hit stays the one counted. */
  private async stillLive(early: Promise<AuthenticatedKey | null>): Promise<AuthenticatedKey | null> {
    const found = await early;
    return found !== null && (await this.keys.isLive(found)) ? found : null;
  }
}

/**
 * The app's early lookup as Express middleware, for `createApp` to install on
 * the API's prefix before the body parsers (a Nest module's own middleware
 * would run after them, too late to overlap the body). A function rather than
 * the provider in the module's exports (STYLE.md §2.2): no module injects it.
 */
export function earlyKeyLookup(app: INestApplicationContext): RequestHandler {
  return app.get(EarlyKeyLookup).middleware();
}
