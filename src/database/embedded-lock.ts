import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LOCK_FILE = 'server.pid';
/** How often a holder refreshes its lock file's time, so a process that cannot see it can tell it is alive. */
const HEARTBEAT_MS = 5_000;
/** A lock of another host or PID namespace not refreshed for this long is a holder's that died. */
const STALE_MS = 3 * HEARTBEAT_MS;

/** Where a process runs: its host and its PID namespace (Linux; '' elsewhere). Pids compare only within one. */
function placeOfThisProcess(): string {
  let namespace = '';
  try {
    namespace = fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    /* not Linux */
  }
  return `${os.hostname()} ${namespace}`;
}

interface Lock {
  pid: number;
  /** `placeOfThisProcess()` of the holder; a lock written before it was recorded is taken as this place's. */
  place: string;
  /** When the holder last refreshed the lock. */
  refreshedAt: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string, here: string): Lock | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    const refreshedAt = fs.statSync(file).mtimeMs;
    if (/^\d+$/.test(text)) return { pid: Number(text), place: here, refreshedAt };
    const { pid, place } = JSON.parse(text) as { pid?: unknown; place?: unknown };
    return typeof pid === 'number' && typeof place === 'string' ? { pid, place, refreshedAt } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The holder of the embedded database in dataDir, if one is alive. A pid of
 * this host and PID namespace is asked directly. A process elsewhere (another
 * container on the same volume, another PID namespace) cannot be asked: its
 * lock counts as held while it keeps being refreshed. Before, a CLI in a
 * second container passed the lock, wrote to the database the server held,
 * and its write was lost.
 */
export function embeddedHolder(dataDir: string, now = Date.now()): { pid: number; elsewhere: boolean } | undefined {
  const here = placeOfThisProcess();
  const lock = readLock(path.join(dataDir, LOCK_FILE), here);
  if (!lock || !Number.isInteger(lock.pid) || lock.pid <= 0) return undefined;
  if (lock.place === here) return lock.pid !== process.pid && alive(lock.pid) ? { pid: lock.pid, elsewhere: false } : undefined;
  return now - lock.refreshedAt < STALE_MS ? { pid: lock.pid, elsewhere: true } : undefined;
}

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dataDir: string, holder: { pid: number; elsewhere: boolean }) {
    super(
      holder.elsewhere
        ? `The embedded database in ${dataDir} is in use by a cardwork process in another container or PID namespace (pid ${holder.pid} there). ` +
            `Stop it first; a lock it left when it died counts as free ${STALE_MS / 1000} s after its last refresh.`
        : `The embedded database in ${dataDir} is in use by a running cardwork server (pid ${holder.pid}). ` +
            'Stop that server first, or set DATABASE_URL to use a PostgreSQL server.',
    );
  }
}

/**
 * PGlite has no lock of its own and two processes on one data directory would
 * corrupt it, so the server (and the CLI) claims the directory with a lock
 * file naming its pid and where it runs, refreshed while it is held.
 */
export function claimEmbedded(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  assertEmbeddedFree(dataDir);
  const file = path.join(dataDir, LOCK_FILE);
  const content = JSON.stringify({ pid: process.pid, place: placeOfThisProcess() });
  fs.writeFileSync(file, content);
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      fs.utimesSync(file, now, now);
    } catch {
      /* removed under us: the release below is then a no-op */
    }
  }, HEARTBEAT_MS).unref();
  return () => {
    clearInterval(heartbeat);
    try {
      if (fs.readFileSync(file, 'utf8').trim() === content) fs.unlinkSync(file);
    } catch {
      /* already gone */
    }
  };
}

export function assertEmbeddedFree(dataDir: string): void {
  const holder = embeddedHolder(dataDir);
  if (holder) throw new EmbeddedDatabaseBusyError(dataDir, holder);
}
