import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { AppConfig } from '../../../config/app-config.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { RateLimitedError, UnauthorizedError } from '../../../shared/domain/domain-error.js';
import { IS_PUBLIC } from '../../../shared/http/actor.decorator.js';
import { API_KEY_BASIC, basicUsername } from './api-key-basic.strategy.js';
import { API_KEY_HEADER } from './api-key-header.strategy.js';
import { RateLimiter } from './rate-limiter.js';

const FAILED_AUTH_PER_MINUTE = 60;

/**
 * Global guard: every route needs an API key unless marked @Public().
 * Two different credentials in one request are refused outright (DESIGN.md §3).
 */
@Injectable()
export class AuthenticationGuard extends AuthGuard([API_KEY_BASIC, API_KEY_HEADER]) {
  private readonly perCredential: RateLimiter;
  private readonly failuresPerAddress = new RateLimiter(FAILED_AUTH_PER_MINUTE, 60_000);

  constructor(
    private readonly reflector: Reflector,
    config: AppConfig,
  ) {
    super();
    this.perCredential = new RateLimiter(config.rateLimitPerMinute, 60_000);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const credentials = presentedCredentials(req);
    if (credentials.size === 0) throw new UnauthorizedError('Authentication required: send an API key');
    if (credentials.size > 1) throw new UnauthorizedError('Send one credential only');
    const address = req.ip ?? 'unknown';
    try {
      await super.canActivate(context);
    } catch (error) {
      const attempt = this.failuresPerAddress.hit(address);
      if (!attempt.allowed) throw new RateLimitedError(attempt.resetSeconds);
      throw error;
    }
    this.limit(context.switchToHttp().getResponse<Response>(), [...credentials][0]);
    return true;
  }

  override handleRequest<T = Actor>(err: unknown, user: T | false): T {
    if (err) throw err;
    if (!user) throw new UnauthorizedError('Invalid or revoked API key');
    return user;
  }

  private limit(res: Response, credential: string): void {
    const r = this.perCredential.hit(credential);
    res.setHeader('RateLimit-Limit', String(this.perCredential.max));
    res.setHeader('RateLimit-Remaining', String(r.remaining));
    res.setHeader('RateLimit-Reset', String(r.resetSeconds));
    if (!r.allowed) throw new RateLimitedError(r.resetSeconds);
  }
}

/** The distinct credentials a request carries, whatever their form. */
function presentedCredentials(req: Request): Set<string> {
  const found = new Set<string>();
  const header = req.headers['x-api-key'];
  if (Array.isArray(header)) header.forEach((h) => found.add(h));
  else if (typeof header === 'string') found.add(header);
  const authorization = req.headers.authorization;
  if (authorization) found.add(basicUsername(authorization) ?? authorization);
  return found;
}
