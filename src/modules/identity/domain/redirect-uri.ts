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

/**
 * Whether an authorization request's `redirect_uri` is one the application
 * registered: the text stored, exactly; or, for a URI stored before
 * registrations had to be written as they parse, the form it parses to (a
 * client library that builds its redirect URI with a URL parser sends that
 * form, and the stored text never matched it). The request must be written
 * in that form itself, and the form must be one that could be registered
 * today. Whole strings are compared, never a prefix or another spelling of
 * the request's: it is the URI the browser is sent to. For a URI registered
 * since, both are the same string.
 */
export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  return registered.some((uri) => uri === requested || registrableForm(uri) === requested);
}

/** The form a stored URI parses to, when it could be registered in that form; else null. */
function registrableForm(uri: string): string | null {
  let href: string;
  try {
    href = new URL(uri).href;
  } catch {
    return null;
  }
  return redirectUriProblem(href) === null ? href : null;
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
