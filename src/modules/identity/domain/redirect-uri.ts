const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'blob:', 'vbscript:', 'about:', 'ftp:', 'ws:', 'wss:']);

/**
 * Why a redirect URI cannot be registered, or null when it can. Redirect URIs
 * are compared exactly at authorization time, so they are stored as given.
 * https anywhere; http only on loopback (RFC 8252 §7.3); otherwise a private
 * scheme in reverse-domain form for native apps (RFC 8252 §7.1); never a fragment.
 *
 * Only a URI written as it parses: the one stored is the one compared and
 * sent back in Location, and one that parsing rewrites does not say where it
 * leads (`https:evil.com/cb` is https://evil.com/cb; in
 * `https://good.com\@evil.com/` the host is good.com and the backslash a
 * slash, which not every parser agrees on).
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  if (/[\s<>"]/.test(uri)) return 'contains spaces or characters a URI may not hold';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (uri.includes('#')) return 'may not contain a fragment (#)';
  if (url.username || url.password) return 'may not contain credentials';
  const problem = schemeProblem(url);
  if (problem) return problem;
  return url.href === uri ? null : `is read as ${url.href}; register it in that form if that is where it should lead`;
}

function schemeProblem(url: URL): string | null {
  if (url.protocol === 'https:') return url.hostname ? null : 'needs a host';
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : 'must use https (http is allowed for localhost, 127.0.0.1 and [::1] only)';
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol) || !url.protocol.slice(0, -1).includes('.')) {
    return 'must use https, http on loopback, or a private scheme in reverse-domain form (com.example.app:/callback)';
  }
  return null;
}
