import { describe, expect, it } from '@jest/globals';
import { RateLimiter } from './rate-limiter.js';

describe('RateLimiter', () => {
  it('allows up to the limit in a window, then refuses until it resets', () => {
    const rl = new RateLimiter(2, 1000);
    expect(rl.hit('k', 0).allowed).toBe(true);
    expect(rl.hit('k', 10).allowed).toBe(true);
    const third = rl.hit('k', 20);
    expect(third.allowed).toBe(false);
    expect(third.resetSeconds).toBe(1);
    expect(rl.hit('other', 20).allowed).toBe(true);
    expect(rl.hit('k', 1001).allowed).toBe(true);
  });
});
