import fs from 'node:fs';
import path from 'node:path';
import { types } from '@electric-sql/pglite';
import { getPGliteInstance, PGliteDriver } from 'typeorm-pglite';

type Done = (err?: unknown) => void;
type ConnectCallback = (err: unknown, client: unknown, done: Done) => void;
interface PoolLike {
  connect(cb: ConnectCallback): Promise<void>;
}
type PoolClass = new (...args: unknown[]) => PoolLike;

/**
 * PGlite is one connection. typeorm-pglite hands that same connection to every
 * query runner at once, so two transactions would interleave their statements.
 * This pool lends the connection to one query runner at a time (like `pg.Pool`
 * with `max: 1`), which keeps transactions isolated on the embedded database.
 */
export function embeddedDriver(dataDir: string | undefined): { Pool: PoolClass } {
  const Base = (pgliteDriver(dataDir).driver as unknown as { Pool: PoolClass }).Pool;
  let tail: Promise<void> = Promise.resolve();

  class SerializedPool extends Base {
    override connect(cb: ConnectCallback): Promise<void> {
      let release!: () => void;
      const turn = new Promise<void>((resolve) => (release = resolve));
      const previous = tail;
      tail = previous.then(() => turn);
      return previous.then(() =>
        super.connect((err, client, done) => {
          let released = false;
          const finish: Done = (e) => {
            if (released) return;
            released = true;
            done(e);
            release();
          };
          if (err) finish(err);
          cb(err, client, finish);
        }),
      );
    }
  }
  return { Pool: SerializedPool };
}

/** typeorm-pglite's driver; its PGlite instance is one per process, made at the first connection. */
function pgliteDriver(dataDir: string | undefined): PGliteDriver {
  // Ids are bigint; like `parseInt8` on pg, read them as JS numbers (safe below 2^53).
  const parsers = { [types.INT8]: (v: string) => Number(v) };
  return new PGliteDriver({ ...(dataDir ? { dataDir } : {}), parsers });
}

/** A start refused because the embedded database would not open: its message is the one line the server prints. */
export class EmbeddedStartError extends Error {}

/**
 * The PostgreSQL major version this build's PGlite runs (PGlite 0.5:
 * PostgreSQL 18); embedded-driver.spec.ts checks it against a fresh PGlite's
 * `server_version_num`, so a PGlite upgrade that changes it fails there.
 */
export const EMBEDDED_PG_MAJOR = 18;

/**
 * Opens the embedded database in `dataDir` before the app is built, as the
 * server's start does; the app's data source then uses that same instance.
 * Inside Nest a database that cannot open (a full disk, a directory the
 * server may not write) was tried ten times, two minutes in all, before
 * Nest's ExceptionHandler ended the process with `{"name":"ErrnoError",
 * "errno":51}`; here it is an EmbeddedStartError naming the directory, the
 * cause and the free space. A damaged database fails the same way, often as
 * only "Aborted()" (one opened by two processes at once is damaged for good),
 * so the message names that too, and the backup to restore.
 */
export async function openEmbedded(dataDir: string): Promise<void> {
  refuseOtherMajor(dataDir);
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    pgliteDriver(dataDir);
    await getPGliteInstance();
  } catch (error) {
    throw new EmbeddedStartError(
      `the embedded database in ${dataDir} could not open: ${fileSystemReason(error)}; ` +
        `check the free space (${freeSpaceNear(dataDir)}) and that the server may write there. ` +
        'If both are fine, the database may be damaged (for example by two processes that had it open at once): ' +
        'restore the last backup (README, "Backups")',
    );
  }
}

/**
 * A data directory written by another PostgreSQL major (a PGlite upgrade)
 * cannot open here: PGlite said only "failed to initialize properly", which
 * the start took for a full disk. It is refused before PGlite touches it.
 */
function refuseOtherMajor(dataDir: string): void {
  let written: string;
  try {
    written = fs.readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8').trim();
  } catch {
    return; // no database there yet (or none we can read: PGlite says why)
  }
  if (written === String(EMBEDDED_PG_MAJOR)) return;
  throw new EmbeddedStartError(
    `the embedded database in ${dataDir} was written by PostgreSQL ${written}, and this build runs PostgreSQL ${EMBEDDED_PG_MAJOR} (PGlite): ` +
      `dump it with the cardwork version that wrote it and restore the dump into an empty DATA_DIR with this one; the directory was left as it is`,
  );
}

/** Closes the embedded database `openEmbedded` opened (as a data source's `destroy` does): an open PGlite keeps the process alive. */
export async function closeEmbedded(dataDir: string): Promise<void> {
  const pool = new (pgliteDriver(dataDir).driver as unknown as { Pool: new () => { end(cb: (err: unknown) => void): void } }).Pool();
  await new Promise<void>((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve())));
}

/** A statement on the embedded database opened by `openEmbedded` (its one connection; nothing else may be using it). */
export async function queryEmbedded<T>(sql: string): Promise<T[]> {
  return (await (await getPGliteInstance()).query<T>(sql)).rows;
}

/** PGlite's file system errors carry Emscripten's errno numbers, not Node's codes. */
const EMSCRIPTEN_ERRNO: Record<number, string> = { 2: 'EACCES', 19: 'EDQUOT', 51: 'ENOSPC', 63: 'EPERM', 69: 'EROFS' };
const WHAT: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EDQUOT: 'disk quota exceeded',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
};

/** What a file system failure was, in words and its code. */
function fileSystemReason(error: unknown): string {
  const e = error as { code?: unknown; errno?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.errno === 'number' ? EMSCRIPTEN_ERRNO[e.errno] : undefined;
  if (code && WHAT[code]) return `${WHAT[code]} (${code})`;
  return typeof e?.message === 'string' && e.message ? e.message : String(error);
}

/** The free space of the file system holding `dir` (or its nearest existing parent), for a message. */
function freeSpaceNear(dir: string): string {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const { bavail, bsize } = fs.statfsSync(at);
      return `${Math.floor((bavail * bsize) / 1024 / 1024)} MiB free there`;
    } catch {
      if (at === path.dirname(at)) return 'free space unknown';
    }
  }
}
