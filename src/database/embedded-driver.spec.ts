import { describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_PG_MAJOR, EmbeddedStartError, openEmbedded } from './embedded-driver.js';

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

describe('openEmbedded', () => {
  it('refuses a damaged database in one line naming the directory, the free space and that it may be damaged, with the backup to restore', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-damaged-'));
    try {
      const lite = await PGlite.create(dataDir);
      await lite.query('CREATE TABLE t (a int)');
      await lite.close();
      // The control file garbled, as a second process writing to it at once may leave it.
      const control = path.join(dataDir, 'global', 'pg_control');
      fs.writeFileSync(control, Buffer.alloc(fs.statSync(control).size, 0x55));
      const refused = await openEmbedded(dataDir).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(EmbeddedStartError);
      const { message } = refused as Error;
      expect(message).not.toContain('\n');
      expect(message).toMatch(
        new RegExp(
          `^the embedded database in ${dataDir} could not open: .+; check the free space \\(\\d+ MiB free there\\) and that the server may write there\\. ` +
            'If both are fine, the database may be damaged \\(for example by two processes that had it open at once\\): restore the last backup \\(README, "Backups"\\)$',
        ),
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
