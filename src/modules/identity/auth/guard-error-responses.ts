import type { OperationObject } from '@nestjs/swagger';
import type { AppConfig } from '../../../config/app-config.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../../shared/persistence/database-availability.js';
import { IS_PUBLIC } from '../../../shared/http/actor.decorator.js';
import type { ErrorReason, ErrorRule } from '../../../shared/http/error-responses.js';
import { ROUTE_SCOPE, type ScopeRule } from '../../../shared/http/scopes.decorator.js';
import type { Scope } from '../../../shared/domain/actor.js';
import { FAILED_AUTH_PER_MINUTE } from './authentication.guard.js';
import { isSafeMethod } from '../../../shared/http/cross-site.policy.js';
import { neededScope, scopeAllows, SCOPES } from './scope.policy.js';

const text = (description: string) => ({ description, schema: { type: 'string' as const } });

const UNAUTHORIZED: ErrorReason = {
  status: 401,
  why: 'AUTH.UNAUTHORIZED: no credential, an unknown or revoked API key, an invalid, expired or revoked access token, or two different credentials',
  headers: { 'WWW-Authenticate': text('`Basic realm="cardwork"`; `Bearer realm="cardwork", error="invalid_token"` for a refused access token') },
};

const CROSS_SITE: ErrorReason = {
  status: 403,
  why: 'AUTH.CROSS_SITE_WRITE: a browser sent this write from another site (`Sec-Fetch-Site`, or `Origin`); nothing is changed',
};

const DATABASE_AWAY: ErrorReason = {
  status: 503,
  why: 'SERVICE.UNAVAILABLE: the database, where every credential is looked up, is not reachable, read-only (a failover) or out of resources; or SERVICE.BUSY: every connection to it is in use. The server serves again by itself once it is back',
  headers: { 'Retry-After': text(`seconds to wait before retrying (${DATABASE_RETRY_AFTER_SECONDS})`) },
};

function rateLimited(config: AppConfig): ErrorReason {
  return {
    status: 429,
    why:
      `RATE.LIMITED: this credential sent over ${config.rateLimitPerMinute} requests this minute (RATE_LIMIT_PER_MINUTE), ` +
      `or this address failed to authenticate ${FAILED_AUTH_PER_MINUTE} times`,
    headers: { 'Retry-After': text('seconds until the window resets') },
  };
}

/** A token holds at least one scope; whether some token could still lack what the route needs. */
const someTokenLacks = (needed: Scope | 'api_key'): boolean => SCOPES.some((scope) => !scopeAllows([scope], needed));

function scopeRefusal(needed: Scope | 'api_key'): ErrorReason {
  const why =
    needed === 'api_key'
      ? 'ACCESS.FORBIDDEN: an OAuth access token cannot call this route, only an API key (`required_scope`: api_key)'
      : `ACCESS.FORBIDDEN: the OAuth access token lacks the scope ${needed} (\`required_scope\` names it)`;
  return { status: 403, why };
}

/**
 * The credentials the guard takes (DESIGN.md §3), by the names app.factory
 * gives their schemes: an API key as the Basic username or in X-Api-Key, and
 * an OAuth access token holding the scope the route needs, unless only an
 * API key may call it.
 */
function credentials(needed: Scope | 'api_key'): NonNullable<OperationObject['security']> {
  return [{ basic: [] }, { api_key: [] }, ...(needed === 'api_key' ? [] : [{ oauth2: [needed] }])];
}

/**
 * What the authentication guard answers each route, read from the same
 * declarations it reads (`@Public()`, the route's scope rule, the method):
 * 401, 403 for a token's scope and for a cross-site write, 429, and 503 when
 * the database that holds the credentials is away. It also states, on the
 * operation, the credentials the guard takes (its `security`), read from the
 * same rule; a public operation keeps none.
 */
export function guardErrorResponses(config: AppConfig): ErrorRule {
  const limited = rateLimited(config);
  return (op) => {
    if (op.declared<boolean>(IS_PUBLIC)) return [];
    // As the guard: a route declaring no scope is for API keys only (RouteScopesCheck makes sure none does).
    const needed = neededScope(op.declared<ScopeRule>(ROUTE_SCOPE) ?? 'api_key', op.method);
    op.operation.security = credentials(needed);
    return [
      UNAUTHORIZED,
      ...(someTokenLacks(needed) ? [scopeRefusal(needed)] : []),
      ...(isSafeMethod(op.method) ? [] : [CROSS_SITE]),
      limited,
      DATABASE_AWAY,
    ];
  };
}
