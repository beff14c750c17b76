import type { ErrorReason, ErrorRule } from '../../../shared/http/error-responses.js';
import { ROUTE_SCOPE, type ScopeRule } from '../../../shared/http/scopes.decorator.js';

const ROLE_TOO_WEAK: ErrorReason = {
  status: 403,
  why: "ACCESS.FORBIDDEN: the caller's role in the team does not allow this change (a viewer only reads; managing members and deleting a project take an admin)",
};

/**
 * Every role reads, so only a write can be refused for a role (DESIGN.md §3),
 * and only a write to something of a team, which its path names: a new team
 * has no role to check yet. A route whose body names its team (an import
 * into a project) documents its own.
 */
export const roleErrorResponses: ErrorRule = (op) =>
  op.declared<ScopeRule>(ROUTE_SCOPE) === 'workspace' && op.method !== 'GET' && op.parameters('path').length ? [ROLE_TOO_WEAK] : [];
