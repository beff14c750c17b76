import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rate-limit counters shared by every server instance (DESIGN.md §3, §10).
 * UNLOGGED: a counter is worth one minute, so it is not worth a WAL write per
 * request, nor surviving a crash or reaching a standby.
 */
export class IdentityRateLimits1763810000000 implements MigrationInterface {
  name = 'IdentityRateLimits1763810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNLOGGED TABLE identity.rate_limit_windows (
        key          text PRIMARY KEY,
        window_start timestamptz NOT NULL,
        hits         integer NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE identity.rate_limit_windows`);
  }
}
