/** A `next` target after login: a path on this site only (no scheme, no `//host`), else the account page. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])/.test(next) && next.length <= 4000 ? next : '/account';
}
