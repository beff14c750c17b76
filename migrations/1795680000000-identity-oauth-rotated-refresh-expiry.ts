import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rotated refresh token's hash was kept while its authorization lived, so a
 * client that refreshes for ever (and is never revoked) added one row per
 * refresh for good. Past the lifetime it had as a refresh token (30 days) it
 * could not be used anyway, so its row now records that end (`expires_at`,
 * copied from the replaced pair's `refresh_expires_at`) and the clean-up
 * deletes it once passed (`OAuthGrantsRepository.pruneRotatedRefresh`, in
 * batches, oldest first: the index).
 *
 * The rows already there do not know theirs; each token was issued before it
 * was rotated, so its end is before now plus the lifetime, which they get.
 */
export class IdentityOAuthRotatedRefreshExpiry1795680000000 implements MigrationInterface {
  name = 'IdentityOAuthRotatedRefreshExpiry1795680000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE identity.oauth_rotated_refresh_tokens ADD COLUMN expires_at timestamptz NOT NULL DEFAULT now() + interval '30 days'`,
    );
    await q.query(`ALTER TABLE identity.oauth_rotated_refresh_tokens ALTER COLUMN expires_at DROP DEFAULT`);
    await q.query(`CREATE INDEX oauth_rotated_refresh_tokens_expires_idx ON identity.oauth_rotated_refresh_tokens (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS identity.oauth_rotated_refresh_tokens_expires_idx`);
    await q.query(`ALTER TABLE identity.oauth_rotated_refresh_tokens DROP COLUMN IF EXISTS expires_at`);
  }
}
