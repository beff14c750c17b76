import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, o: object) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1 };
const KEY_PREFIX = 'cwk_';

/** `scrypt$N$r$p$salt$hash`, so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algo, n, r, p, salt, hash] = stored.split('$');
  if (algo !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** A new API key: `cwk_` + 32 random bytes (base64url). */
export function newApiKey(): { key: string; prefix: string; hash: string } {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

/** Keys carry 256 bits of entropy, so a fast hash is enough (no brute force possible). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function looksLikeApiKey(key: string): boolean {
  return key.startsWith(KEY_PREFIX) && key.length > 20 && key.length < 200;
}

/**
 * A random opaque credential (OAuth client secret, code or token) with a
 * recognisable prefix. Like API keys, only its SHA-256 hash is stored.
 */
export function newOpaqueSecret(prefix: string, bytes = 32): { value: string; hash: string } {
  const value = prefix + randomBytes(bytes).toString('base64url');
  return { value, hash: hashApiKey(value) };
}

/** The stored form of an opaque credential. */
export const hashSecret = hashApiKey;
