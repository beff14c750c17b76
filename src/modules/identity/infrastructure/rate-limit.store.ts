import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface RateLimitHit {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/** One sweep of expired windows per this many hits, on average. */
const SWEEP_EVERY = 500;

/**
 * Fixed-window counters in PostgreSQL, shared by every instance on the same
 * database (DESIGN.md §3, §10). One statement per hit: an upsert that starts a
 * new window or counts one more in the current one. Windows are cut on the
 * database's clock, so instances with skewed clocks still agree. Keys are
 * hashed: the table never holds a credential.
 */
@Injectable()
export class RateLimitStore {
  private readonly logger = new Logger(RateLimitStore.name);

  constructor(private readonly dataSource: DataSource) {}

  async hit(key: string, limit: number, windowSeconds: number): Promise<RateLimitHit> {
    const rows: Array<{ hits: number; reset_seconds: string | number }> = await this.dataSource.query(
      `INSERT INTO identity.rate_limit_windows AS w (key, window_start, hits)
       VALUES ($1, to_timestamp(floor(extract(epoch FROM clock_timestamp()) / $2::float8) * $2::float8), 1)
       ON CONFLICT (key) DO UPDATE
         SET hits = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.hits + 1 ELSE 1 END,
             window_start = EXCLUDED.window_start
       RETURNING hits, extract(epoch FROM w.window_start + make_interval(secs => $2::float8) - clock_timestamp()) AS reset_seconds`,
      [hashKey(key), windowSeconds],
    );
    if (Math.random() * SWEEP_EVERY < 1) this.sweep(windowSeconds);
    const hits = Number(rows[0].hits);
    return {
      allowed: hits <= limit,
      limit,
      remaining: Math.max(0, limit - hits),
      resetSeconds: Math.max(1, Math.ceil(Number(rows[0].reset_seconds))),
    };
  }

  /** Drops windows that ended; a crash or a missed sweep only costs space, never a wrong count. */
  private sweep(windowSeconds: number): void {
    this.dataSource
      .query(`DELETE FROM identity.rate_limit_windows WHERE window_start < clock_timestamp() - make_interval(secs => $1::float8)`, [
        windowSeconds,
      ])
      .catch((error: unknown) => this.logger.warn(`rate-limit sweep failed: ${String(error)}`));
  }
}

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}
