import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Validates `oauth_tokens_grant_fk` now that no token row is left without its grant row. */
export class IdentityOAuthTokensGrantFkValidate1795640000200 implements MigrationInterface {
  name = 'IdentityOAuthTokensGrantFkValidate1795640000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE identity.oauth_tokens VALIDATE CONSTRAINT oauth_tokens_grant_fk`);
  }

  async down(): Promise<void> {
    // A validated key needs no undoing: the previous migration's down drops it.
  }
}
