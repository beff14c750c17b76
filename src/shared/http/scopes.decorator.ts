import { SetMetadata } from '@nestjs/common';
import type { Scope } from '../domain/actor.js';

export const ROUTE_SCOPE = 'cardwork:scope';

/**
 * What a route asks of an OAuth access token (DESIGN.md §3). API keys have the
 * user's full access and pass every rule.
 * - `workspace`: GET and HEAD need `read_workspace`, every other method `write_workspace`.
 * - a scope: exactly that scope (or one that includes it).
 * - `api_key`: no OAuth token may call the route, whatever its scopes.
 */
export type ScopeRule = Scope | 'workspace' | 'api_key';

/**
 * Class-level declaration for workspace routes: reads need `read_workspace`,
 * writes `write_workspace`. Every controller of the API declares its scopes
 * (or is `@Public()`); the server refuses to start otherwise.
 */
export const WorkspaceRoutes = () => SetMetadata(ROUTE_SCOPE, 'workspace' satisfies ScopeRule);

/** Method- or class-level declaration of the one scope a route needs; overrides a class-level rule. */
export const RequiresScope = (scope: Scope) => SetMetadata(ROUTE_SCOPE, scope satisfies ScopeRule);

/** Routes that mint or manage credentials: an OAuth token must not reach them (it would outlive its grant). */
export const ApiKeyOnly = () => SetMetadata(ROUTE_SCOPE, 'api_key' satisfies ScopeRule);
