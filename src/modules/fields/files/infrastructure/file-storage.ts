import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { DomainError } from '../../../../shared/domain/domain-error.js';

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

/** What a client is told to wait when the storage cannot take a file: a disk is not freed in seconds. */
const STORAGE_RETRY_AFTER_SECONDS = 60;

/**
 * The storage cannot take a file now: its disk is full, or it is not writable
 * (mounted read-only, permissions). 503 with `Retry-After`, as the database
 * away is: the request was fine and may succeed once an operator has freed
 * space (507 Insufficient Storage is WebDAV's, and clients do not retry it).
 */
export class FileStorageUnavailableError extends DomainError {
  readonly code = 'SERVICE.UNAVAILABLE';
  readonly kind = 'unavailable' as const;
  readonly retryAfterSeconds = STORAGE_RETRY_AFTER_SECONDS;
}

/**
 * Where file field contents live. The database row keeps name, size and MIME
 * type; the store holds only bytes, addressed by an opaque key.
 *
 * A key put is unsettled until `settle` (the row naming it committed) or
 * `delete` (its transaction rolled back): one still unsettled after a while
 * was written by a transaction whose outcome the server never learnt (its
 * COMMIT cut) or did not live to learn (a crash), and FileBlobs keeps or
 * deletes it by whether a row names it.
 */
export abstract class FileStorage {
  /** Throws FileStorageUnavailableError when the storage cannot take it now. */
  abstract put(key: string, bytes: Buffer): Promise<void>;
  /** null when the key is unknown. */
  abstract get(key: string): Promise<Buffer | null>;
  /** Whether the contents of `key` are stored. */
  abstract has(key: string): Promise<boolean>;
  /** For downloads, so a large file is not held in memory; null when unknown. */
  abstract openStream(key: string): Promise<{ stream: Readable; size: number } | null>;
  /** Deleting an unknown key is not an error: clean-up may run twice. */
  abstract delete(key: string): Promise<void>;
  /** The keys are named by committed rows: they stay. */
  abstract settle(keys: string[]): Promise<void>;
  /** Keys put at least `olderThanMs` ago and neither settled nor deleted since. */
  abstract unsettled(olderThanMs: number): Promise<string[]>;
  /** Removes what writes cut by a crash left (temp files older than `olderThanMs`); how many. */
  abstract removeStaleTemps(olderThanMs: number): Promise<number>;
}

// Duck-typed: `instanceof Error` fails for errors made in another realm (jest's VM contexts).
function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

function isNotFound(error: unknown): boolean {
  return errorCode(error) === 'ENOENT';
}

/** Errors of a disk that cannot take more, or of a directory the server may not write. */
const FULL = new Set(['ENOSPC', 'EDQUOT']);
const NOT_WRITABLE = new Set(['EROFS', 'EACCES', 'EPERM']);

/** Where unsettled keys are noted: not a shard (those are two characters of a key, which never starts with a dot). */
const UNSETTLED_DIR = '.unsettled';
const TEMP_SUFFIX = '.tmp';

export class DiskFileStorage extends FileStorage {
  private readonly baseDir: string;
  private readonly logger = new Logger('FileStorage');

  constructor(baseDir: string) {
    super();
    this.baseDir = path.resolve(baseDir);
  }

  /** Two-character shards keep directories small once there are many files. */
  private pathOf(key: string): string {
    if (!isValidFileKey(key)) throw new InvalidFileKeyError(key);
    return path.join(this.baseDir, key.slice(0, 2), key);
  }

  /**
   * Refuses, at start (main.ts), a base directory the server cannot write
   * (read-only, permissions, not a directory): a misconfiguration, with which
   * every upload would fail long after the start looked fine. A full disk is
   * not refused but returned as a warning for the start to log: uploads answer
   * 503 until space is freed and the rest of the API serves, as when the disk
   * fills while running; refusing would make a restart (a crash, a
   * reschedule) turn "uploads unavailable" into "the API is down".
   */
  async checkWritable(): Promise<string | undefined> {
    const probe = path.join(this.baseDir, `.write-check-${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    try {
      await mkdir(this.baseDir, { recursive: true });
      await writeFile(probe, 'x', { flag: 'wx' });
      return undefined;
    } catch (error) {
      const why = (await this.causeOf(error)) as Error;
      if (FULL.has(errorCode(why) as string)) {
        return `${this.baseDir} (DATA_DIR/files, where uploaded files are stored) has no free space (${why.message}); starting anyway, uploads answer 503 until space is freed`;
      }
      throw new Error(
        `${this.baseDir} (DATA_DIR/files, where uploaded files are stored) is not writable: ${why.message}; check its permissions, its mount and its free space`,
      );
    } finally {
      await rm(probe, { force: true }).catch(() => undefined);
    }
  }

  private markerOf(key: string): string {
    if (!isValidFileKey(key)) throw new InvalidFileKeyError(key);
    return path.join(this.baseDir, UNSETTLED_DIR, key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const target = this.pathOf(key);
    // The mark first: a crash leaves only a stray temp file (removeStaleTemps) and the key's mark
    // (unsettled), never the blob without its mark.
    try {
      await this.markUnsettled(key);
      await mkdir(path.dirname(target), { recursive: true });
      await writeWhole(target, bytes);
    } catch (error) {
      await rm(this.markerOf(key), { force: true }).catch(() => undefined);
      throw (await this.refusal(error)) ?? error;
    }
  }

  /**
   * The mark holds when it was made, by this process's clock: its mtime is
   * the file server's (NFS), which may be far behind, and a fresh mark that
   * looked old would be settled away before its transaction committed.
   */
  private async markUnsettled(key: string): Promise<void> {
    const marker = this.markerOf(key);
    await mkdir(path.dirname(marker), { recursive: true });
    await writeWhole(marker, String(Date.now()));
  }

  /**
   * A failed write the disk refused (full, read-only, permissions) as a 503
   * naming nothing of the server's paths, with a log line naming the cause;
   * undefined for any other failure.
   */
  private async refusal(error: unknown): Promise<FileStorageUnavailableError | undefined> {
    const code = errorCode(await this.causeOf(error));
    if (typeof code !== 'string' || (!FULL.has(code) && !NOT_WRITABLE.has(code))) return undefined;
    const full = FULL.has(code);
    this.logger.error(
      `cannot store a file under ${this.baseDir}: ${full ? 'no free space' : 'not writable'} (${code}: ${(error as Error).message}); ` +
        `uploads answer 503 until ${full ? 'space is freed' : 'the directory is writable again'}`,
    );
    return new FileStorageUnavailableError(
      `The server cannot store files now (${full ? 'its storage is full' : 'its storage is not writable'}); retry after Retry-After seconds`,
    );
  }

  /** A failed write's cause: a recursive mkdir on a read-only disk says ENOENT, the nearest directory that exists tells why. */
  private async causeOf(error: unknown): Promise<unknown> {
    return (isNotFound(error) && (await this.writeErrorOfBase())) || error;
  }

  /** Why the base directory (or its nearest existing parent) cannot be written; undefined when it can. */
  private async writeErrorOfBase(): Promise<unknown> {
    for (let dir = this.baseDir; ; dir = path.dirname(dir)) {
      try {
        await access(dir, constants.W_OK);
        return undefined;
      } catch (error) {
        if (!isNotFound(error) || dir === path.dirname(dir)) return error;
      }
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

  async has(key: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(key))).isFile();
    } catch (error) {
      if (isNotFound(error)) return false;
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
    await rm(this.markerOf(key), { force: true });
  }

  async settle(keys: string[]): Promise<void> {
    for (const key of keys) await rm(this.markerOf(key), { force: true });
  }

  async unsettled(olderThanMs: number): Promise<string[]> {
    const dir = path.join(this.baseDir, UNSETTLED_DIR);
    const before = Date.now() - olderThanMs;
    const keys: string[] = [];
    for (const name of (await namesIn(dir)).filter(isValidFileKey)) {
      const marked = await markedAt(path.join(dir, name));
      if (marked !== undefined && marked <= before) keys.push(name);
    }
    return keys;
  }

  async removeStaleTemps(olderThanMs: number): Promise<number> {
    const before = Date.now() - olderThanMs;
    let removed = 0;
    // In the shards, and in UNSETTLED_DIR: a mark is written whole too.
    for (const shard of await namesIn(this.baseDir)) {
      const dir = path.join(this.baseDir, shard);
      for (const name of (await namesIn(dir)).filter((n) => n.endsWith(TEMP_SUFFIX))) {
        const file = path.join(dir, name);
        const written = tempStartedAt(name) ?? (await mtimeOf(file));
        if (written === undefined || written > before) continue;
        await rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** When a temp file's write began, from its name (`writeWhole`); undefined for names of older versions (their mtime tells). */
export function tempStartedAt(name: string): number | undefined {
  const match = /\.([0-9a-z]{1,11})-[0-9a-f]{12}\.tmp$/.exec(name);
  const ms = match ? parseInt(match[1], 36) : NaN;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** The names in a directory; none when it does not exist (nothing stored yet) or is not one. */
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isNotFound(error) || errorCode(error) === 'ENOTDIR') return [];
    throw error;
  }
}

/**
 * Writes under a temp name, then renames: a reader never sees the file half
 * written. The name holds when the write began, by this process's clock
 * (`tempStartedAt`): a temp file's mtime is the file server's, and a clock
 * behind would let another server's start sweep a write still going.
 */
async function writeWhole(target: string, content: Buffer | string): Promise<void> {
  const temp = `${target}.${Date.now().toString(36)}-${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  try {
    await writeFile(temp, content, { flag: 'wx' });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/** When a key was marked, in ms: the time its mark holds, or its mtime for a mark from before marks held one; undefined when it is gone. */
async function markedAt(marker: string): Promise<number | undefined> {
  let held: string;
  try {
    held = await readFile(marker, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  return /^\d+$/.test(held) ? Number(held) : mtimeOf(marker);
}

/** A file's modification time in ms, undefined when it is gone. */
async function mtimeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
