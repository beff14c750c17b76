import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createTestKernel, type TestKernel } from '../../../../test/support/test-kernel.js';
import { hashLimitKey, windowUpsertSql } from './rate-limit.store.js';

/**
 * The window upsert commits without waiting for the WAL flush, and only its
 * own transaction does: the setting never reaches the next statement of the
 * connection (a card write after it commits durably).
 */
describe('rate-limit window statement', () => {
  let k: TestKernel;

  beforeAll(async () => {
    k = await createTestKernel();
  });
  afterAll(() => k.close());

  it('counts hits with synchronous_commit off for its own transaction only', async () => {
    const key = hashLimitKey(`sync-commit-spec-${Date.now()}`);
    // One connection throughout (a transaction), so the setting is read where the upsert ran.
    const runner = k.module.get(DataSource).createQueryRunner();
    await runner.connect();
    try {
      const during = async () => {
        const rows = (await runner.query(
          `WITH hit AS (${windowUpsertSql('$1', '$2')}) SELECT hit.hits, current_setting('synchronous_commit') AS setting FROM hit`,
          [key, 60],
        )) as Array<{ hits: number | string; setting: string }>;
        return rows.map((r) => [Number(r.hits), r.setting]);
      };
      const after = async () => ((await runner.query(`SHOW synchronous_commit`)) as Array<{ synchronous_commit: string }>)[0].synchronous_commit;
      expect(await during()).toEqual([[1, 'off']]);
      expect(await after()).toBe('on');
      expect(await during()).toEqual([[2, 'off']]);
      expect(await after()).toBe('on');
    } finally {
      await runner.release();
    }
  });
});
