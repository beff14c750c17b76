import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { AppConfig } from '../../../config/app-config.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from '../../../shared/domain/domain-error.js';
import { IS_PUBLIC } from '../../../shared/http/actor.decorator.js';
import { ROUTE_SCOPE, type ScopeRule } from '../../../shared/http/scopes.decorator.js';
import { credentialWindowKey, RATE_WINDOW_SECONDS, type AuthenticatedKey } from '../application/api-keys.service.js';
import { OAuthServerService } from '../application/oauth-server.service.js';
import { CrossSiteWriteError } from '../domain/identity.errors.js';
import { API_KEY_BASIC } from './api-key-basic.strategy.js';
import { API_KEY_HEADER } from './api-key-header.strategy.js';
import { apiKeyHeader, basicUsername, bearerToken, presentedCredentials } from './credentials.js';
import { isCrossSiteWrite } from '../../../shared/http/cross-site.policy.js';
import { RateLimitStore, type RateLimitHit } from '../infrastructure/rate-limit.store.js';
import { neededScope, scopeAllows } from './scope.policy.js';

export const FAILED_AUTH_PER_MINUTE = 60;

/**
 * Global guard: every route needs an API key or an OAuth access token unless
 * marked @Public(), and a token must hold the scope the route declares.
 * Two different credentials in one request are refused outright (DESIGN.md §3).
 */
@Injectable()
export class AuthenticationGuard extends AuthGuard([API_KEY_BASIC, API_KEY_HEADER]) {
  /** Where the service's own pages and API are served (an `Origin` from here is not another site). */
  private readonly serviceOrigins: ReadonlySet<string>;

  constructor(
    private readonly reflector: Reflector,
    private readonly oauth: OAuthServerService,
    private readonly config: AppConfig,
    private readonly limits: RateLimitStore,
  ) {
    super();
    this.serviceOrigins = new Set([new URL(config.baseUrl).origin, new URL(config.authUrl).origin]);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<Request>();
    // Before the credential is even looked at: it may be one the browser attached by itself.
    if (isCrossSiteWrite(req, this.serviceOrigins)) throw new CrossSiteWriteError();
    const credentials = presentedCredentials(req);
    if (credentials.size === 0) throw new UnauthorizedError('Authentication required: send an API key');
    if (credentials.size > 1) throw new UnauthorizedError('Send one credential only');
    const address = req.ip ?? 'unknown';
    const bearer = bearerToken(req.headers.authorization);
    let hit: RateLimitHit;
    try {
      if (bearer === undefined) {
        // An API key: its lookup counted the request against the key's limit (req.authInfo).
        await super.canActivate(context);
        hit = (req as Request & { authInfo: AuthenticatedKey }).authInfo.rateLimit;
      } else {
        (req as Request & { user?: Actor }).user = await this.authenticateBearer(bearer);
        hit = await this.limits.hit(credentialWindowKey([...credentials][0]), this.config.rateLimitPerMinute, RATE_WINDOW_SECONDS);
      }
    } catch (error) {
      // Only refused credentials count; a database outage is not the client's failure.
      if (!(error instanceof UnauthorizedError)) throw error;
      const attempt = await this.limits.hit(`failed-auth:${address}`, FAILED_AUTH_PER_MINUTE, RATE_WINDOW_SECONDS);
      if (!attempt.allowed) throw new RateLimitedError(attempt.resetSeconds);
      throw error;
    }
    this.limits.maybeSweep(RATE_WINDOW_SECONDS);
    const res = context.switchToHttp().getResponse<Response>();
    // An X-Api-Key request looks anonymous to a shared cache (RFC 9111 §3.5 only
    // covers Authorization): without this a proxy could hand one user's answer to the next caller.
    res.setHeader('Cache-Control', 'private, no-cache');
    applyLimit(res, hit);
    this.checkScope(context, (req as Request & { user: Actor }).user, req.method);
    return true;
  }

  private async authenticateBearer(token: string): Promise<Actor> {
    const actor = await this.oauth.authenticateBearer(token);
    if (!actor) throw new UnauthorizedError('Invalid, expired or revoked access token', BEARER_INVALID);
    return actor;
  }

  /** API keys (scopes null) pass; a token needs the scope its route declares (RouteScopesCheck makes sure there is one). */
  private checkScope(context: ExecutionContext, actor: Actor, method: string): void {
    if (actor.scopes === null) return;
    const rule = this.reflector.getAllAndOverride<ScopeRule | undefined>(ROUTE_SCOPE, [context.getHandler(), context.getClass()]);
    const needed = rule === undefined ? 'api_key' : neededScope(rule, method);
    if (scopeAllows(actor.scopes, needed)) return;
    throw new ForbiddenError(
      needed === 'api_key'
        ? 'This route needs an API key; an OAuth token cannot call it'
        : `This access token lacks the scope ${needed}`,
      undefined,
      { required_scope: needed },
    );
  }

  /**
   * Every credential but a bearer token ends here: an API key that is not
   * (or no longer) valid, and an `Authorization` header in no form the
   * service takes (`Bearer` without a token, Basic with a password, another
   * scheme), which the refusal must not call an API key.
   */
  override handleRequest<T = Actor>(err: unknown, user: T | false, _info: unknown, context: ExecutionContext): T {
    if (err) throw err;
    if (user) return user;
    const req = context.switchToHttp().getRequest<Request>();
    if (apiKeyHeader(req) !== undefined || basicUsername(req.headers.authorization) !== undefined) throw new UnauthorizedError('Invalid or revoked API key');
    throw new UnauthorizedError(UNRECOGNISED_CREDENTIAL);
  }
}

/** The limit's headers; 429 once the credential's window is used up (counted in PostgreSQL, shared by every instance). */
function applyLimit(res: Response, r: RateLimitHit): void {
  res.setHeader('RateLimit-Limit', String(r.limit));
  res.setHeader('RateLimit-Remaining', String(r.remaining));
  res.setHeader('RateLimit-Reset', String(r.resetSeconds));
  if (!r.allowed) throw new RateLimitedError(r.resetSeconds);
}

const UNRECOGNISED_CREDENTIAL =
  'Unrecognised credential: send an API key (X-Api-Key, or as the Basic username with an empty password) or an OAuth access token (Authorization: Bearer <token>)';

const BEARER_INVALID = 'Bearer realm="cardwork", error="invalid_token"';
