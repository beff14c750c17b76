import type { Scope } from '../../../shared/domain/actor.js';
import type { ScopeRule } from '../../../shared/http/scopes.decorator.js';

export const SCOPES: readonly Scope[] = ['read_user', 'read_workspace', 'write_workspace'];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The scope (or `api_key`) a request needs, from the route's rule and the HTTP method. */
export function neededScope(rule: ScopeRule, method: string): Scope | 'api_key' {
  if (rule !== 'workspace') return rule;
  return method === 'GET' || method === 'HEAD' ? 'read_workspace' : 'write_workspace';
}

/**
 * DESIGN.md §3: `read_user` → GET /me only; `read_workspace` → every GET (GET /me
 * included); `write_workspace` → everything. So a wider scope satisfies a narrower one.
 */
const SATISFIED_BY: Record<Scope, readonly Scope[]> = {
  read_user: ['read_user', 'read_workspace', 'write_workspace'],
  read_workspace: ['read_workspace', 'write_workspace'],
  write_workspace: ['write_workspace'],
};

/** Whether a token holding `granted` may make a request that needs `needed`. */
export function scopeAllows(granted: readonly Scope[], needed: Scope | 'api_key'): boolean {
  if (needed === 'api_key') return false;
  return SATISFIED_BY[needed].some((s) => granted.includes(s));
}
