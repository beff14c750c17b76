import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `Idempotency-Key`s of API POSTs (`IdempotencyKeysStore`), per user: a
 * key's first request claims its row before its handler runs (`status` NULL
 * while it runs), and its 2xx answer is kept there (status, type, Location,
 * body; `body` NULL when not kept) for a retry with the same key to replay.
 * A failed request deletes its row. `claim` tells this run of the key from a
 * later one that took over its row (a claim left running 15 minutes, or a
 * key past its 24 hours). Logged, unlike the rate-limit windows: a replay
 * must survive a crash and reach a standby. Swept by `created_at`.
 */
export class IdentityIdempotencyKeys1795690000000 implements MigrationInterface {
  name = 'IdentityIdempotencyKeys1795690000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE identity.idempotency_keys (
        user_id      bigint NOT NULL REFERENCES identity.users(id) ON DELETE CASCADE,
        key          text NOT NULL,
        fingerprint  text NOT NULL,
        claim        uuid NOT NULL,
        created_at   timestamptz NOT NULL,
        status       smallint,
        content_type text,
        location     text,
        body         bytea,
        PRIMARY KEY (user_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created_idx ON identity.idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE identity.idempotency_keys`);
  }
}
