import { createHash, randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { apartFromClient } from '../../../shared/client-watch.js';
import { returnedRows } from '../../../shared/persistence/sql.js';

/** How long a key is kept from its first use; past it, a request with the key runs afresh. */
export const KEY_LIFETIME_HOURS = 24;
/** A claim still running after this long is a server that died mid-request: the next request with the key takes it over. */
export const STALE_CLAIM_MINUTES = 15;
/**
 * The largest answer kept for replay (as large as a request body may be); a
 * larger one is kept as done, without its body. The request holds what it
 * collects of its answer in memory until then.
 */
export const MAX_KEPT_ANSWER_BYTES = 1024 * 1024;
/**
 * The most one user's kept answers of the last KEY_LIFETIME_HOURS hold
 * together; past it an answer is kept as done, without its body. Without a
 * bound, a small POST with a new key each time, its client leaving at once,
 * stored a card's whole JSON per request: 160 MB in 8 s, kept a day.
 * Requests completing at the same moment may pass it by an answer each.
 */
export const MAX_KEPT_BYTES_PER_USER = 32 * 1024 * 1024;
/** One sweep of expired keys per this many claims, on average. */
const SWEEP_EVERY = 100;
/** At most this many expired keys deleted per sweep. */
const SWEEP_BATCH = 1000;

/** The 2xx answer of a key's first request, as it is kept and replayed. */
export interface KeptAnswer {
  status: number;
  contentType: string | null;
  location: string | null;
  /** Null when it was not kept (over MAX_KEPT_ANSWER_BYTES or the user's MAX_KEPT_BYTES_PER_USER, or an answer that holds a secret). */
  body: Buffer | null;
}

/** What a key's row says to a request that could not claim it. */
export type KeyState =
  | { state: 'running'; fingerprint: string; runningSeconds: number; takeoverSeconds: number }
  | { state: 'done'; fingerprint: string; answer: KeptAnswer };

/** This request's hold on a key: released or completed only while it is still this one's (`claim`). */
export interface KeyClaim {
  userId: number;
  key: string;
  claim: string;
}

interface StateRow {
  fingerprint: string;
  running_seconds: number | string;
  status: number | string | null;
  content_type: string | null;
  location: string | null;
  body: Uint8Array | null;
}

/**
 * What a request is, for telling a retry from another request under the same
 * key: its method, its path with the query, and its body as the parsers read it.
 */
export function requestFingerprint(method: string, originalUrl: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${originalUrl}\n${JSON.stringify(body) ?? ''}`)
    .digest('base64url');
}

/**
 * The Idempotency-Key rows (`identity.idempotency_keys`), written outside the
 * request's unit of work, on the database's clock. A claim is one statement
 * (INSERT … ON CONFLICT … RETURNING) that also takes over a key past its
 * lifetime or a claim left running past STALE_CLAIM_MINUTES; the other
 * statements touch the row only while it holds this request's `claim`, so a
 * request whose claim was taken over cannot overwrite its successor's.
 */
@Injectable()
export class IdempotencyKeysStore {
  private readonly logger = new Logger(IdempotencyKeysStore.name);

  constructor(private readonly dataSource: DataSource) {}

  /** Claims the key for this request; undefined when another request holds it (running or done). */
  async claim(userId: number, key: string, fingerprint: string): Promise<KeyClaim | undefined> {
    const claim = randomUUID();
    const rows = returnedRows<{ claim: string }>(
      await this.dataSource.query(
        `INSERT INTO identity.idempotency_keys AS k (user_id, key, fingerprint, claim, created_at)
         VALUES ($1, $2, $3, $4, clock_timestamp())
         ON CONFLICT (user_id, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, created_at = EXCLUDED.created_at,
               status = NULL, content_type = NULL, location = NULL, body = NULL
           WHERE k.created_at < EXCLUDED.created_at - make_interval(hours => ${KEY_LIFETIME_HOURS})
              OR (k.status IS NULL AND k.created_at < EXCLUDED.created_at - make_interval(mins => ${STALE_CLAIM_MINUTES}))
         RETURNING k.claim`,
        [userId, key, fingerprint, claim],
      ),
    );
    this.maybeSweep();
    return rows.length ? { userId, key, claim } : undefined;
  }

  /** The key's row as it is now; undefined when it is gone (its request failed meanwhile). */
  async state(userId: number, key: string): Promise<KeyState | undefined> {
    const rows: StateRow[] = await this.dataSource.query(
      `SELECT fingerprint, status, content_type, location, body, extract(epoch FROM clock_timestamp() - created_at) AS running_seconds
         FROM identity.idempotency_keys WHERE user_id = $1 AND key = $2`,
      [userId, key],
    );
    const row = rows[0];
    if (!row) return undefined;
    if (row.status === null) {
      return { state: 'running', fingerprint: row.fingerprint, runningSeconds: Number(row.running_seconds), takeoverSeconds: STALE_CLAIM_MINUTES * 60 };
    }
    const answer = {
      status: Number(row.status),
      contentType: row.content_type,
      location: row.location,
      body: row.body === null ? null : Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength),
    };
    return { state: 'done', fingerprint: row.fingerprint, answer };
  }

  /**
   * Keeps the 2xx answer of the claim's request, its body only while the
   * user's kept answers stay within MAX_KEPT_BYTES_PER_USER (octet_length of
   * a stored body reads its size, not the body). Run apart from the request's
   * client: a client that left will retry.
   */
  async complete(c: KeyClaim, answer: KeptAnswer): Promise<void> {
    await apartFromClient(() =>
      this.dataSource.query(
        `UPDATE identity.idempotency_keys SET status = $4, content_type = $5, location = $6,
                body = CASE WHEN (SELECT coalesce(sum(octet_length(o.body)), 0) FROM identity.idempotency_keys o
                                   WHERE o.user_id = $1 AND o.body IS NOT NULL
                                     AND o.created_at >= clock_timestamp() - make_interval(hours => ${KEY_LIFETIME_HOURS}))
                                + coalesce(octet_length($7::bytea), 0) <= ${MAX_KEPT_BYTES_PER_USER}
                            THEN $7::bytea END
         WHERE user_id = $1 AND key = $2 AND claim = $3`,
        [c.userId, c.key, c.claim, answer.status, answer.contentType, answer.location, answer.body],
      ),
    );
  }

  /** Lets the key go: its request failed, and changed nothing (DESIGN.md §2), so a retry runs it again. */
  async release(c: KeyClaim): Promise<void> {
    await apartFromClient(() =>
      this.dataSource.query(`DELETE FROM identity.idempotency_keys WHERE user_id = $1 AND key = $2 AND claim = $3`, [c.userId, c.key, c.claim]),
    );
  }

  /**
   * Now and then deletes keys past their lifetime, oldest first, a batch at a
   * time; a missed sweep only costs space (an expired key is taken over when
   * used again). The outer condition is checked again on a row a claim took
   * over meanwhile, which is then kept.
   */
  private maybeSweep(): void {
    if (Math.random() * SWEEP_EVERY >= 1) return;
    const expired = `created_at < clock_timestamp() - make_interval(hours => ${KEY_LIFETIME_HOURS})`;
    apartFromClient(() =>
      this.dataSource.query(
        `DELETE FROM identity.idempotency_keys WHERE ${expired} AND (user_id, key) IN (
           SELECT user_id, key FROM identity.idempotency_keys WHERE ${expired} ORDER BY created_at LIMIT ${SWEEP_BATCH})`,
      ),
    ).catch((error: unknown) => this.logger.warn(`idempotency-key sweep failed: ${String(error)}`));
  }
}
