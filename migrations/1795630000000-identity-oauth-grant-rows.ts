import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every authorization with tokens gets its grant row back. A code's row is
 * its authorization's (`oauth_tokens.grant_id`): a token pair is stored only
 * while that row exists and is not marked ended, which is what keeps a pair
 * from outliving a concurrent refresh-token reuse. Used codes used to be
 * deleted a day after they expired, tokens or not; this restores a row for
 * each such authorization (no code can match its hash: codes are stored as
 * 64 hex digits), so its refresh tokens keep working.
 */
export class IdentityOAuthGrantRows1795630000000 implements MigrationInterface {
  name = 'IdentityOAuthGrantRows1795630000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO identity.oauth_codes (id, code_hash, client_id, user_id, redirect_uri, scopes, expires_at, used_at, created_at)
      SELECT DISTINCT ON (t.grant_id)
             t.grant_id, 'grant-without-code:' || t.grant_id, t.client_id, t.user_id, '', t.scopes, t.created_at, t.created_at, t.created_at
        FROM identity.oauth_tokens t
       WHERE NOT EXISTS (SELECT 1 FROM identity.oauth_codes c WHERE c.id = t.grant_id)
       ORDER BY t.grant_id, t.id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM identity.oauth_codes WHERE code_hash LIKE 'grant-without-code:%'`);
  }
}
