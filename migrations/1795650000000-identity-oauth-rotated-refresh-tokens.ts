import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rotated refresh token must stay recognisable while its authorization
 * lives (presenting it again ends the authorization: reuse detection), but
 * nothing else of its token row is needed once the pair that replaced it is
 * stored: its access token was revoked with it, its times and scopes are never
 * read again. So a superseded pair's row leaves `oauth_tokens` and only its
 * refresh token's hash stays, with the authorization it ends
 * (`OAuthGrantsRepository.insertToken` moves them when it stores the next
 * pair). The rows go with their grant row, as the token rows do.
 *
 * The superseded rows of live authorizations (revoked rows of one that has
 * its current pair, unrevoked: while an authorization lives, only rotation
 * revokes a pair) move here now. A revoked row without a successor (a
 * refresh between revoking the old pair and storing the new one) stays:
 * it keeps its grant row from the clean-up until the new pair is stored. The
 * rows of ended authorizations stay too, and go with them within a day.
 */
export class IdentityOAuthRotatedRefreshTokens1795650000000 implements MigrationInterface {
  name = 'IdentityOAuthRotatedRefreshTokens1795650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE identity.oauth_rotated_refresh_tokens (
        refresh_token_hash text PRIMARY KEY,
        grant_id           bigint NOT NULL REFERENCES identity.oauth_codes(id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX oauth_rotated_refresh_tokens_grant_idx ON identity.oauth_rotated_refresh_tokens (grant_id)`);
    await q.query(`
      WITH superseded AS (
        DELETE FROM identity.oauth_tokens t
         USING identity.oauth_codes g
         WHERE g.id = t.grant_id AND g.replayed_at IS NULL AND t.revoked_at IS NOT NULL
           AND EXISTS (SELECT 1 FROM identity.oauth_tokens n WHERE n.grant_id = t.grant_id AND n.revoked_at IS NULL)
        RETURNING t.refresh_token_hash, t.grant_id)
      INSERT INTO identity.oauth_rotated_refresh_tokens (refresh_token_hash, grant_id)
      SELECT refresh_token_hash, grant_id FROM superseded WHERE refresh_token_hash IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The moved tokens' other columns are gone; a rotated refresh token comes
    // back as a revoked row of its authorization (an access hash no token has),
    // which is all reuse detection reads.
    await q.query(`
      INSERT INTO identity.oauth_tokens
        (access_token_hash, refresh_token_hash, client_id, user_id, grant_id, scopes, access_expires_at, refresh_expires_at, revoked_at)
      SELECT 'rotated:' || r.refresh_token_hash, r.refresh_token_hash, g.client_id, g.user_id, g.id, g.scopes, now(), now(), now()
        FROM identity.oauth_rotated_refresh_tokens r JOIN identity.oauth_codes g ON g.id = r.grant_id`);
    await q.query(`DROP TABLE identity.oauth_rotated_refresh_tokens`);
  }
}
