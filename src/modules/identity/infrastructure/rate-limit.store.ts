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

/** What the window upsert returns. */
export interface WindowRow {
  hits: number | string;
  reset_seconds: number | string;
}

/** One sweep of expired windows per this many hits, on average. */
const SWEEP_EVERY = 500;

/**
 * The upsert that counts one hit in a fixed window: it starts a new window or
 * counts one more in the current one, and returns `hits` and `reset_seconds`.
 * `source` is the FROM clause the inserted row comes from (a CTE, so another
 * statement can count in the same round trip, or nothing for a plain VALUES
 * row); `keyParam` and `windowParam` name the statement's parameters holding
 * the hashed key and the window length in seconds.
 */
export function windowUpsertSql(keyParam: string, windowParam: string, source = ''): string {
  const start = `to_timestamp(floor(extract(epoch FROM clock_timestamp()) / ${windowParam}::float8) * ${windowParam}::float8)`;
  return `INSERT INTO identity.rate_limit_windows AS w (key, window_start, hits)
          SELECT ${keyParam}, ${start}, 1 ${source}
          ON CONFLICT (key) DO UPDATE
            SET hits = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.hits + 1 ELSE 1 END,
                window_start = EXCLUDED.window_start
          RETURNING w.hits, extract(epoch FROM w.window_start + make_interval(secs => ${windowParam}::float8) - clock_timestamp()) AS reset_seconds`;
}

/** A counted hit against `limit`. */
export function toHit(row: WindowRow, limit: number): RateLimitHit {
  const hits = Number(row.hits);
  return {
    allowed: hits <= limit,
    limit,
    remaining: Math.max(0, limit - hits),
    resetSeconds: Math.max(1, Math.ceil(Number(row.reset_seconds))),
  };
}

/** Keys are hashed: the table never holds a credential. */
export function hashLimitKey(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/**
 * Fixed-window counters in PostgreSQL, shared by every instance on the same
 * database (DESIGN.md §3, §10). One statement per hit (`windowUpsertSql`);
 * authentication by API key counts its hit in its own lookup statement
 * (`ApiKeysRepository.findActiveCounting`). Windows are cut on the database's
 * clock, so instances with skewed clocks still agree.
 */
@Injectable()
export class RateLimitStore {
  private readonly logger = new Logger(RateLimitStore.name);

  constructor(private readonly dataSource: DataSource) {}

  async hit(key: string, limit: number, windowSeconds: number): Promise<RateLimitHit> {
    const rows: WindowRow[] = await this.dataSource.query(windowUpsertSql('$1', '$2'), [hashLimitKey(key), windowSeconds]);
    this.maybeSweep(windowSeconds);
    return toHit(rows[0], limit);
  }

  /** Now and then drops windows that ended; a crash or a missed sweep only costs space, never a wrong count. */
  maybeSweep(windowSeconds: number): void {
    if (Math.random() * SWEEP_EVERY >= 1) return;
    this.dataSource
      .query(`DELETE FROM identity.rate_limit_windows WHERE window_start < clock_timestamp() - make_interval(secs => $1::float8)`, [
        windowSeconds,
      ])
      .catch((error: unknown) => this.logger.warn(`rate-limit sweep failed: ${String(error)}`));
  }
}
