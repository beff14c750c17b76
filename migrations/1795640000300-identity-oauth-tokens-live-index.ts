import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The clean-up of grant rows (`OAuthGrantsRepository.removeEndedGrants`)
 * keeps an authorization while a token of it was usable within the last day
 * (not revoked before then, not expired before then). An authorization keeps
 * every refresh token it rotated, for reuse detection, so nearly all token
 * rows are revoked ones; led by the revocation time (unrevoked as infinity),
 * the usable ones are one short range of this index. On 5 000 authorizations
 * of 200 rows each: 1.6 ms, against 310 ms probing each grant's rows through
 * `oauth_tokens_grant_idx`.
 */
export class IdentityOAuthTokensLiveIndex1795640000300 implements MigrationInterface {
  name = 'IdentityOAuthTokensLiveIndex1795640000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX oauth_tokens_live_idx
          ON identity.oauth_tokens ((coalesce(revoked_at, 'infinity'::timestamptz)), grant_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS identity.oauth_tokens_live_idx`);
  }
}
