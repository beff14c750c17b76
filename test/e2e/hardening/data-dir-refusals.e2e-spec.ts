import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from '@jest/globals';
import { LOG_FLUSH_MS } from '../../../src/observability/logging.js';
import { onPostgres } from '../../support/on-postgres.js';
import { freePort, processDatabase, runToExit, startServer } from '../../support/server-process.js';

// A DATA_DIR the server cannot write refuses the start in one line, as other
// start-up refusals do (docs/RELIABILITY.md, "Storage full or read-only"):
// before, uploads answered 500 later, and an embedded database on a full disk
// was tried for two minutes before Nest's ExceptionHandler printed
// {"name":"ErrnoError","errno":51}. A full one with PostgreSQL is no refusal:
// the server starts with a warning and only uploads answer 503. Runs the
// built server (`npm run build`) on tmpfs mounts, which only root may make:
// elsewhere the suite is skipped.
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
const fullForFiles = path.join(root, 'full-for-files');
const canMount = mount(readOnly, 'ro,size=1m') && mount(full, 'size=1m') && mount(fullForFiles, 'size=1m');
const describeWhereMountable = canMount ? describe : describe.skip;
if (!canMount) console.warn('data-dir-refusals: skipped, mounting tmpfs needs root');

describeWhereMountable('a DATA_DIR the server cannot write', () => {
  afterAll(() => {
    for (const dir of [readOnly, full, fullForFiles]) execFileSync('umount', [dir]);
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

  (onPostgres ? it : it.skip)('starts on a full one with PostgreSQL, warning in one line, and answers uploads 503 with Retry-After', async () => {
    const db = await processDatabase();
    const { apiKey } = db.createUser('uploader');
    // Every byte taken: not even the start's 1-byte probe fits.
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${path.join(fullForFiles, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
    } catch {
      /* dd stops at ENOSPC, which is the point */
    }
    // Before, the start was refused: "… is not writable: ENOSPC: no space left on device…".
    const server = await startServer({ ...db.env, DATA_DIR: path.join(fullForFiles, 'data') });
    try {
      await sleep(2 * LOG_FLUSH_MS);
      const warnings = server.output().trim().split('\n').filter((line) => line.includes('FileStorage'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0])).toMatchObject({
        level: 40,
        msg: expect.stringMatching(/full-for-files\/data\/files \(DATA_DIR\/files, where uploaded files are stored\) has no free space \(ENOSPC.*uploads answer 503/),
      });
      const call = async (method: string, url: string, body?: unknown) => {
        const res = await fetch(`${server.base}${url}`, {
          method,
          headers: { 'X-Api-Key': apiKey, ...(body instanceof FormData ? {} : { 'Content-Type': 'application/json' }) },
          body: body instanceof FormData ? body : JSON.stringify(body),
        });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
      };
      const team = (await call('POST', '/organizations', { name: 'Team' })).body.id;
      const project = (await call('POST', `/organizations/${team}/projects`, { title: 'Project' })).body;
      expect((await call('POST', `/projects/${project.id}/attributes`, { name: 'Docs', type: 'files' })).status).toBe(201);
      const card = await call('POST', `/cards/${project.top_level_card_id}/children`, { title: 'card' });
      expect(card.status).toBe(201);
      const form = new FormData();
      form.append('value', new Blob([Buffer.alloc(1_000, 7)]), 'doc.bin');
      const upload = await call('POST', `/cards/${card.body.id}/attributes/Docs/append`, form);
      expect(upload).toMatchObject({ status: 503, retryAfter: '60', body: { type: 'SERVICE.UNAVAILABLE', detail: expect.stringMatching(/storage is full/) } });
    } finally {
      await server.stop();
      await db.drop();
    }
  }, 60_000);
});
