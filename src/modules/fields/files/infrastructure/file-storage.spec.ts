import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DiskFileStorage, InvalidFileKeyError, isValidFileKey, newFileKey } from './file-storage.js';

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

  it('generates distinct valid keys', () => {
    const keys = new Set(Array.from({ length: 100 }, () => newFileKey()));
    expect(keys.size).toBe(100);
    for (const key of keys) expect(isValidFileKey(key)).toBe(true);
  });
});
