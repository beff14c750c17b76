import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account page lists the applications a user authorized, and revoking
 * one ends every authorization of that user for it: both find a user's grant
 * rows (`identity.oauth_codes`) by user and application, which no index led
 * with (every account page view read the whole table).
 */
export class IdentityOAuthCodesUserIndex1795660000000 implements MigrationInterface {
  name = 'IdentityOAuthCodesUserIndex1795660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX oauth_codes_user_client_idx ON identity.oauth_codes (user_id, client_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS identity.oauth_codes_user_client_idx`);
  }
}
