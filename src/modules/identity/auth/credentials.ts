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

/**
 * The distinct credentials a request carries, whatever their form. Read from
 * the raw headers: Node keeps only the first of several `Authorization`
 * headers and joins several `X-Api-Key` headers into one "a, b" string, so
 * two different keys in two `Authorization` headers authenticated as the
 * first, and one key sent twice as `X-Api-Key` was refused as a key "k, k".
 */
export function presentedCredentials(req: Request): Set<string> {
  const found = new Set<string>();
  for (const key of apiKeys(req)) found.add(key);
  for (const value of rawHeaderValues(req, 'authorization')) if (value) found.add(basicUsername(value) ?? value);
  return found;
}

/** The key of the request's `X-Api-Key` header (the first, when it is sent again: the guard refuses two different ones). */
export function apiKeyHeader(req: Request): string | undefined {
  return apiKeys(req)[0];
}

/**
 * The keys of every `X-Api-Key` header, each header's value also split at
 * commas: a proxy (or a client's header object) may join repeated headers
 * into one "k, k", as Node does, and no key holds a comma.
 */
function apiKeys(req: Request): string[] {
  return rawHeaderValues(req, 'x-api-key').flatMap((value) => value.split(',').map((key) => key.trim())).filter(Boolean);
}

/** Each value of a header, as sent, trimmed. */
function rawHeaderValues(req: Request, name: string): string[] {
  const raw = req.rawHeaders ?? [];
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i].toLowerCase() === name) values.push(raw[i + 1].trim());
  return values;
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
