import { describe, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_PG_MAJOR } from './embedded-driver.js';

describe('EMBEDDED_PG_MAJOR', () => {
  it('is the major version a fresh PGlite of this build runs (a data directory of another is refused at start)', async () => {
    const lite = await PGlite.create();
    try {
      const [{ server_version_num: num }] = (await lite.query<{ server_version_num: string }>('SHOW server_version_num')).rows;
      expect(Math.floor(Number(num) / 10_000)).toBe(EMBEDDED_PG_MAJOR);
    } finally {
      await lite.close();
    }
  });
});
