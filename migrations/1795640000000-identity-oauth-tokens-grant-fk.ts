import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A token row belongs to its authorization's grant row (the code's,
 * `oauth_tokens.grant_id`) and goes with it: the grant row is kept while a
 * token of it may be used or its reuse still matters, so deleting it is the
 * one clean-up of both. NOT VALID: from now on no delete leaves a token
 * behind (not even one by an instance still running the previous release);
 * the rows left behind before are deleted next, then the key is validated.
 */
export class IdentityOAuthTokensGrantFk1795640000000 implements MigrationInterface {
  name = 'IdentityOAuthTokensGrantFk1795640000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE identity.oauth_tokens
        ADD CONSTRAINT oauth_tokens_grant_fk FOREIGN KEY (grant_id)
        REFERENCES identity.oauth_codes(id) ON DELETE CASCADE NOT VALID`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE identity.oauth_tokens DROP CONSTRAINT IF EXISTS oauth_tokens_grant_fk`);
  }
}
