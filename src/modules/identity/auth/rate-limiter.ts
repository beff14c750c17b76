/**
 * Fixed-window counter per key, in memory. Enough for one instance; several
 * instances behind a balancer would move this to Redis (DESIGN.md §10).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one hit; returns what is left, or the seconds to wait when over. */
  hit(key: string, now = Date.now()): { allowed: boolean; remaining: number; resetSeconds: number } {
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      if (this.windows.size > 100_000) this.sweep(now);
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    const resetSeconds = Math.max(1, Math.ceil((w.resetAt - now) / 1000));
    return { allowed: w.count <= this.limit, remaining: Math.max(0, this.limit - w.count), resetSeconds };
  }

  get max(): number {
    return this.limit;
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}
