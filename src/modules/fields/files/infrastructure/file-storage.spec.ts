import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DiskFileStorage, FileStorageUnavailableError, InvalidFileKeyError, isValidFileKey, newFileKey, tempStartedAt } from './file-storage.js';

/** A tmpfs mounted under `root`, or undefined where the test may not mount (not root). */
async function tmpfs(root: string, options: string): Promise<string | undefined> {
  const at = path.join(root, 'tmpfs');
  await mkdir(at);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', at], { stdio: 'ignore' });
    return at;
  } catch {
    return undefined;
  }
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('DiskFileStorage', () => {
  let root: string;
  let base: string;
  let storage: DiskFileStorage;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'cardwork-files-'));
    base = path.join(root, 'files');
    storage = new DiskFileStorage(base);
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('stores, reads back byte for byte, streams and deletes', async () => {
    const key = newFileKey();
    const bytes = Buffer.from([0, 255, 1, 254, ...Buffer.from('héllo')]);
    await storage.put(key, bytes);
    expect(await storage.get(key)).toEqual(bytes);

    const opened = await storage.openStream(key);
    expect(opened?.size).toBe(bytes.length);
    expect(await readAll(opened!.stream)).toEqual(bytes);

    await storage.delete(key);
    expect(await storage.get(key)).toBeNull();
    expect(await storage.openStream(key)).toBeNull();
  });

  it('keeps the file under the base directory and no temp files behind', async () => {
    const key = newFileKey();
    await storage.put(key, Buffer.from('x'));
    expect(await readdir(path.join(base, key.slice(0, 2)))).toEqual([key]);
  });

  it('replaces a file put twice under one key', async () => {
    const key = newFileKey();
    await storage.put(key, Buffer.from('first'));
    await storage.put(key, Buffer.from('second'));
    expect((await storage.get(key))?.toString()).toBe('second');
  });

  it('stores empty files', async () => {
    const key = newFileKey();
    await storage.put(key, Buffer.alloc(0));
    expect(await storage.get(key)).toEqual(Buffer.alloc(0));
  });

  it('answers null for unknown keys and ignores deleting them', async () => {
    expect(await storage.get('ab0000')).toBeNull();
    await expect(storage.delete('ab0000')).resolves.toBeUndefined();
  });

  it.each([['../secret'], ['..'], ['a/b'], ['ab/../../x'], ['a\\b'], ['.hidden'], [''], ['a'], ['ab\u0000'], ['x'.repeat(129)]])(
    'refuses the key %j before touching the disk',
    async (key) => {
      expect(isValidFileKey(key)).toBe(false);
      await expect(storage.put(key, Buffer.from('x'))).rejects.toThrow(InvalidFileKeyError);
      await expect(storage.get(key)).rejects.toThrow(InvalidFileKeyError);
      await expect(storage.openStream(key)).rejects.toThrow(InvalidFileKeyError);
      await expect(storage.delete(key)).rejects.toThrow(InvalidFileKeyError);
    },
  );

  it('cannot be tricked into reading outside the base directory', async () => {
    await writeFile(path.join(root, 'secret'), 'top secret');
    await expect(storage.get('../secret')).rejects.toThrow(InvalidFileKeyError);
  });

  it('keeps a key put unsettled until it is settled or deleted', async () => {
    const [kept, dropped, settled] = [newFileKey(), newFileKey(), newFileKey()];
    for (const key of [kept, dropped, settled]) await storage.put(key, Buffer.from(key));
    expect((await storage.unsettled(0)).sort()).toEqual([kept, dropped, settled].sort());
    // Not yet as old as asked.
    expect(await storage.unsettled(60_000)).toEqual([]);
    await storage.settle([settled]);
    await storage.delete(dropped);
    expect(await storage.unsettled(0)).toEqual([kept]);
    // Settling keeps the bytes; only the mark goes.
    expect((await storage.get(settled))?.toString()).toBe(settled);
    // Nothing stored yet: none unsettled.
    expect(await new DiskFileStorage(path.join(root, 'empty')).unsettled(0)).toEqual([]);
  });

  it("ages a mark by the time it holds, not by its mtime (the file server's clock, on NFS possibly far behind)", async () => {
    const [fresh, older] = [newFileKey(), newFileKey()];
    for (const key of [fresh, older]) await storage.put(key, Buffer.from(key));
    const twoHoursAgo = new Date(Date.now() - 7_200_000);
    await utimes(path.join(base, '.unsettled', fresh), twoHoursAgo, twoHoursAgo);
    // Before, the mtime said two hours: settled away (deleted, no row naming it yet) before its transaction committed.
    expect(await storage.unsettled(3_600_000)).toEqual([]);
    // A mark written before marks held their time is aged by its mtime.
    await writeFile(path.join(base, '.unsettled', older), '');
    await utimes(path.join(base, '.unsettled', older), twoHoursAgo, twoHoursAgo);
    expect(await storage.unsettled(3_600_000)).toEqual([older]);
  });

  it('removes temp files older than asked, and nothing else', async () => {
    const key = newFileKey();
    await storage.put(key, Buffer.from('kept'));
    const shard = path.join(base, key.slice(0, 2));
    const old = path.join(shard, `${key}.aaaaaa.tmp`);
    const fresh = path.join(shard, `${key}.bbbbbb.tmp`);
    await writeFile(old, 'cut short');
    await writeFile(fresh, 'being written');
    // A mark is written whole (temp, rename) too: a crash can leave its temp file.
    const oldMark = path.join(base, '.unsettled', `${newFileKey()}.cccccc.tmp`);
    await writeFile(oldMark, '1');
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const file of [old, oldMark]) await utimes(file, hourAgo, hourAgo);
    expect(await storage.removeStaleTemps(600_000)).toBe(2);
    expect((await readdir(shard)).sort()).toEqual([key, `${key}.bbbbbb.tmp`].sort());
    expect(await readdir(path.join(base, '.unsettled'))).toEqual([key]);
    expect((await storage.get(key))?.toString()).toBe('kept');
  });

  it('ages a temp file by the time in its name, not its mtime (a file server whose clock is behind)', async () => {
    const key = newFileKey();
    await storage.put(key, Buffer.from('kept'));
    const shard = path.join(base, key.slice(0, 2));
    const tag = (ms: number) => `${ms.toString(36)}-${'ab'.repeat(6)}`;
    const going = path.join(shard, `${key}.${tag(Date.now())}.tmp`);
    const cut = path.join(shard, `${key}.${tag(Date.now() - 3_600_000)}.tmp`);
    await writeFile(going, 'being written');
    await writeFile(cut, 'cut short');
    const hourAgo = new Date(Date.now() - 3_600_000);
    // The mtime of the write still going says an hour (the server's clock behind); its name says now.
    await utimes(going, hourAgo, hourAgo);
    await utimes(cut, new Date(), new Date());
    expect(await storage.removeStaleTemps(600_000)).toBe(1);
    expect((await readdir(shard)).sort()).toEqual([key, path.basename(going)].sort());
  });

  it('names its temp files with the time their write began', () => {
    expect(tempStartedAt(`${newFileKey()}.${(1_800_000_000_000).toString(36)}-0123456789ab.tmp`)).toBe(1_800_000_000_000);
    expect(tempStartedAt(`${newFileKey()}.aaaaaa.tmp`)).toBeUndefined();
  });

  it('refuses at start a base directory it cannot create, naming it', async () => {
    await writeFile(path.join(root, 'plain-file'), 'not a directory');
    const blocked = new DiskFileStorage(path.join(root, 'plain-file', 'files'));
    await expect(blocked.checkWritable()).rejects.toThrow(/plain-file\/files \(DATA_DIR\/files, where uploaded files are stored\) is not writable: .*ENOTDIR/);
    expect(await storage.checkWritable()).toBeUndefined();
    expect(await readdir(base)).toEqual([]);
  });

  it('warns at start of a full disk (uploads answer 503, the rest serves), and refuses a read-only one', async () => {
    const mounted = await tmpfs(root, 'size=64k');
    if (!mounted) return console.warn('file-storage: no tmpfs (not root): the full disk at start is tested by the e2e suite where it can mount');
    try {
      await writeFile(path.join(mounted, 'filler'), Buffer.alloc(128 * 1024)).catch(() => undefined);
      expect(await new DiskFileStorage(path.join(mounted, 'files')).checkWritable()).toMatch(
        /tmpfs\/files \(DATA_DIR\/files, where uploaded files are stored\) has no free space \(ENOSPC: .*uploads answer 503 until space is freed$/,
      );
      execFileSync('mount', ['-o', 'remount,ro', mounted]);
      // Its mkdir says ENOENT: the read-only mount is the cause named.
      await expect(new DiskFileStorage(path.join(mounted, 'elsewhere', 'files')).checkWritable()).rejects.toThrow(/is not writable: EROFS/);
    } finally {
      execFileSync('umount', [mounted]);
    }
  });

  it('answers a disk that refuses writes as FileStorageUnavailableError (503, Retry-After), a read-only one too', async () => {
    const mounted = await tmpfs(root, 'size=64k');
    if (!mounted) return console.warn('file-storage: no tmpfs (not root): the disk-full case is tested by the e2e suite where it can mount');
    try {
      const full = new DiskFileStorage(path.join(mounted, 'files'));
      const refusal = await full.put(newFileKey(), Buffer.alloc(200_000)).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(FileStorageUnavailableError);
      expect(refusal).toMatchObject({ kind: 'unavailable', retryAfterSeconds: 60, message: expect.stringMatching(/storage is full/) });
      // Nothing left behind: no temp file, no mark.
      expect(await full.unsettled(0)).toEqual([]);
      execFileSync('mount', ['-o', 'remount,ro', mounted]);
      const readOnly = new DiskFileStorage(path.join(mounted, 'elsewhere', 'files'));
      await expect(readOnly.put(newFileKey(), Buffer.from('x'))).rejects.toThrow(/storage is not writable/);
    } finally {
      execFileSync('umount', [mounted]);
    }
  });

  it('generates distinct valid keys', () => {
    const keys = new Set(Array.from({ length: 100 }, () => newFileKey()));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(isValidFileKey(key)).toBe(true);
  });
});
