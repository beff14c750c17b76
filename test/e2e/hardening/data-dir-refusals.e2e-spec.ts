import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { freePort, runToExit } from '../../support/server-process.js';

// A DATA_DIR the server cannot write refuses the start in one line, as other
// start-up refusals do (docs/RELIABILITY.md, "Storage full or read-only"):
// before, uploads answered 500 later, and an embedded database on a full disk
// was tried for two minutes before Nest's ExceptionHandler printed
// {"name":"ErrnoError","errno":51}. Runs the built server (`npm run build`)
// on tmpfs mounts, which only root may make: elsewhere the suite is skipped.
const root = mkdtempSync(path.join(tmpdir(), 'cardwork-datadir-'));

function mount(dir: string, options: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const readOnly = path.join(root, 'read-only');
const full = path.join(root, 'full');
const canMount = mount(readOnly, 'ro,size=1m') && mount(full, 'size=1m');
const describeWhereMountable = canMount ? describe : describe.skip;
if (!canMount) console.warn('data-dir-refusals: skipped, mounting tmpfs needs root');

describeWhereMountable('a DATA_DIR the server cannot write', () => {
  afterAll(() => {
    for (const dir of [readOnly, full]) execFileSync('umount', [dir]);
    rmSync(root, { recursive: true, force: true });
  });

  const refusal = async (dataDir: string) => {
    const refused = await runToExit({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(refused.code).toBe(1);
    expect(refused.output.trim().split('\n')).toHaveLength(1);
    return refused.output.trim();
  };

  it('refuses a read-only one in one line naming DATA_DIR/files and the cause', async () => {
    expect(await refusal(path.join(readOnly, 'data'))).toMatch(
      /^cardwork failed to start: .*\/read-only\/data\/files \(DATA_DIR\/files, where uploaded files are stored\) is not writable: EROFS: read-only file system.*check its permissions, its mount and its free space$/,
    );
  }, 60_000);

  it('refuses an embedded database on a full disk in one line naming the cause and the free space', async () => {
    // Room for the start's own checks and a few files, not for a database.
    execFileSync('dd', ['if=/dev/zero', `of=${path.join(full, 'filler')}`, 'bs=1k', 'count=900'], { stdio: 'ignore' });
    const started = Date.now();
    expect(await refusal(path.join(full, 'data'))).toMatch(
      /^cardwork failed to start: the embedded database in .*\/full\/data\/db could not open: no space left on the device \(ENOSPC\); check the free space \(\d+ MiB free there\)/,
    );
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
