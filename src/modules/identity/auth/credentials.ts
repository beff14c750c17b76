import type { Request } from 'express';

/**
 * The key a Basic credential carries: the username when the password is
 * empty (`key:`), or the whole decoded value when it has no colon (`key`);
 * undefined otherwise.
 */
export function basicUsername(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return decoded === '' ? undefined : decoded;
  if (colon === 0) return undefined;
  const password = decoded.slice(colon + 1);
  return password === '' ? decoded.slice(0, colon) : undefined;
}

/** The token of `Authorization: Bearer <token>`; undefined for any other form. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1] : undefined;
}

/** The distinct credentials a request carries, whatever their form. */
export function presentedCredentials(req: Request): Set<string> {
  const found = new Set<string>();
  const header = req.headers['x-api-key'];
  if (Array.isArray(header)) header.forEach((h) => found.add(h));
  else if (typeof header === 'string') found.add(header);
  const authorization = req.headers.authorization;
  if (authorization) found.add(basicUsername(authorization) ?? authorization);
  return found;
}

/**
 * The API key a request authenticates with, when that is how it
 * authenticates: one credential, and no bearer token. Undefined otherwise
 * (no credential, two, or an OAuth token).
 */
export function soleApiKey(req: Request): string | undefined {
  const credentials = presentedCredentials(req);
  if (credentials.size !== 1 || bearerToken(req.headers.authorization) !== undefined) return undefined;
  return [...credentials][0];
}
