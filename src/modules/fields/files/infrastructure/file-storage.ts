import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

// Keys are ours (see newFileKey), but they end up in paths, so anything that
// could climb out of the base directory is refused rather than trusted.
const KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{1,127}$/;

/** Thrown for a key that is not one we generate: a programming error, never user input. */
export class InvalidFileKeyError extends Error {
  constructor(key: string) {
    super(`Invalid file storage key ${JSON.stringify(key.slice(0, 140))}`);
    this.name = 'InvalidFileKeyError';
  }
}

/** 128 random bits in hex: unguessable, and safe as a file name on any disk. */
export function newFileKey(): string {
  return randomBytes(16).toString('hex');
}

export function isValidFileKey(key: string): boolean {
  return KEY.test(key);
}

/**
 * Where file field contents live. The database row keeps name, size and MIME
 * type; the store holds only bytes, addressed by an opaque key.
 */
export abstract class FileStorage {
  abstract put(key: string, bytes: Buffer): Promise<void>;
  /** null when the key is unknown. */
  abstract get(key: string): Promise<Buffer | null>;
  /** For downloads, so a large file is not held in memory; null when unknown. */
  abstract openStream(key: string): Promise<{ stream: Readable; size: number } | null>;
  /** Deleting an unknown key is not an error: clean-up may run twice. */
  abstract delete(key: string): Promise<void>;
}

// Duck-typed: `instanceof Error` fails for errors made in another realm (jest's VM contexts).
function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT';
}

export class DiskFileStorage extends FileStorage {
  private readonly baseDir: string;

  constructor(baseDir: string) {
    super();
    this.baseDir = path.resolve(baseDir);
  }

  /** Two-character shards keep directories small once there are many files. */
  private pathOf(key: string): string {
    if (!isValidFileKey(key)) throw new InvalidFileKeyError(key);
    return path.join(this.baseDir, key.slice(0, 2), key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    // Write then rename: a reader never sees half a file, and a crash leaves only a stray temp file.
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temp, bytes, { flag: 'wx' });
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async openStream(key: string): Promise<{ stream: Readable; size: number } | null> {
    const file = this.pathOf(key);
    // Open first and stat the handle, so a delete in between cannot break the stream after we said "found".
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream(), size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
