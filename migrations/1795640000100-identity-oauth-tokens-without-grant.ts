import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deletes the token rows whose grant row is gone: the code clean-up deleted
 * grant rows once no token of them could be refreshed, and left their tokens.
 * None of them can be refreshed (a pair is stored only under its grant row),
 * and their authorization's reuse detection went with the grant row; an
 * access token among them still inside its hour is the only use lost.
 */
export class IdentityOAuthTokensWithoutGrant1795640000100 implements MigrationInterface {
  name = 'IdentityOAuthTokensWithoutGrant1795640000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM identity.oauth_tokens t
       WHERE NOT EXISTS (SELECT 1 FROM identity.oauth_codes c WHERE c.id = t.grant_id)`);
  }

  async down(): Promise<void> {
    // Deleted rows of tokens that cannot be used do not come back.
  }
}
