import { describe, expect, it } from '@jest/globals';
import { hashApiKey, hashPassword, looksLikeApiKey, newApiKey, verifyPassword } from './secrets.js';

describe('secrets', () => {
  it('verifies the right password only', async () => {
    const stored = await hashPassword('correct horse');
    expect(stored).not.toContain('correct horse');
    await expect(verifyPassword('correct horse', stored)).resolves.toBe(true);
    await expect(verifyPassword('wrong', stored)).resolves.toBe(false);
  });

  it('makes distinct prefixed keys whose hash is stable', () => {
    const a = newApiKey();
    const b = newApiKey();
    expect(a.key).toMatch(/^cwk_[A-Za-z0-9_-]{43}$/);
    expect(a.key).not.toBe(b.key);
    expect(a.hash).toBe(hashApiKey(a.key));
    expect(a.key.startsWith(a.prefix)).toBe(true);
    expect(looksLikeApiKey(a.key)).toBe(true);
    expect(looksLikeApiKey('nope')).toBe(false);
  });
});
