import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LOCK_FILE = 'server.pid';
/** How often a holder refreshes its lock file's time, so a process that cannot see it can tell it is alive. */
const HEARTBEAT_MS = 5_000;
/** A lock of another host or PID namespace not refreshed for this long is a holder's that died. */
const STALE_MS = 3 * HEARTBEAT_MS;
/** A lock file with no readable lock in it this young is one being written (a file system without hard links). */
const BEING_WRITTEN_MS = 1_000;
/** How long a claim waits for another process that is replacing the same stale lock. */
const CLAIM_WAIT_MS = 5_000;

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

/** This boot of the host (Linux), so a lock written before a reboot is not taken for one of a process now. */
function bootId(): string | undefined {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The directory itself (device and inode): a copy of it (`cp -a`) is another one, with the lock copied along. */
function directoryId(dir: string): string | undefined {
  try {
    const { dev, ino } = fs.statSync(dir, { bigint: true });
    return ino > 0n ? `${dev}:${ino}` : undefined;
  } catch {
    return undefined;
  }
}

/** A process as Linux's /proc/<pid>/stat shows it: its state (field 3) and its start time in clock ticks after boot (field 22). */
export interface ProcStat {
  state: string;
  started: string;
}

/** Parses /proc/<pid>/stat. Its second field, the command in parentheses, may hold spaces and parentheses: fields count from the last ')'. */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 1).trim().split(/\s+/);
  const [state, started] = [fields[0], fields[19]];
  return state && started && /^\d+$/.test(started) ? { state, started } : undefined;
}

/** /proc/<pid>/stat of a process; undefined where there is no /proc or it may not be read (hidepid). */
function procStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a lock file says of its holder. */
export interface Lock {
  pid: number;
  /** `placeOfThisProcess()` of the holder; a lock written before it was recorded is taken as this place's. */
  place: string;
  /** The holder's start time (/proc/<pid>/stat field 22), where it had /proc; locks of older servers have none. */
  started?: string;
  /** The boot the holder ran in (Linux). */
  boot?: string;
  /** `directoryId` of the data directory the holder claimed. */
  dir?: string;
  /** When the holder last refreshed the lock. */
  refreshedAt: number;
}

/** The process judging a lock: its pid, place, boot, the directory the lock is in, and the time. */
export interface Judge {
  pid: number;
  place: string;
  boot?: string;
  dir?: string;
  now: number;
}

/**
 * Whether a lock's holder is alive: 'here' (a process of this host and PID
 * namespace), 'elsewhere' (another container or PID namespace, which cannot
 * be asked) or undefined (dead: the lock is stale). `stat` is the lock's pid
 * as /proc shows it now (undefined where it cannot be read), `signalable`
 * whether a signal may be sent to it.
 *
 * A pid alone said too little: after a crash or a reboot another program
 * could have the pid and every start was refused; a server killed with
 * SIGKILL is a zombie until its parent reaps it; and a copy of a running
 * DATA_DIR carried the running server's lock. So a holder of this place is
 * alive only if it is not a zombie, has the start time and boot its lock
 * recorded, and refreshes the lock of this very directory. A lock that
 * recorded none of these (an older server's) is judged by its pid alone.
 */
export function holderState(
  lock: Lock,
  judge: Judge,
  stat: ProcStat | undefined,
  isSignalable: () => boolean,
): 'here' | 'elsewhere' | undefined {
  if (!Number.isInteger(lock.pid) || lock.pid <= 0) return undefined;
  const fresh = judge.now - lock.refreshedAt < STALE_MS;
  if (lock.place !== judge.place) return fresh ? 'elsewhere' : undefined;
  if (lock.pid === judge.pid) return undefined;
  if (lock.boot && judge.boot && lock.boot !== judge.boot) return undefined;
  // A copy's lock is not refreshed: its holder refreshes the original.
  if (lock.dir && judge.dir && lock.dir !== judge.dir && !fresh) return undefined;
  if (stat) {
    if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return undefined;
    if (lock.started && stat.started !== lock.started) return undefined;
    return 'here';
  }
  return isSignalable() ? 'here' : undefined;
}

function judgeHere(dataDir: string, now = Date.now()): Judge {
  return { pid: process.pid, place: placeOfThisProcess(), boot: bootId(), dir: directoryId(dataDir), now };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

/** A lock file's text as a lock; undefined if it holds none. */
function parseLock(content: string, refreshedAt: number, here: string): Lock | undefined {
  const trimmed = content.trim();
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed), place: here, refreshedAt };
  try {
    const { pid, place, started, boot, dir } = JSON.parse(trimmed) as Record<string, unknown>;
    if (typeof pid !== 'number' || typeof place !== 'string') return undefined;
    return { pid, place, started: text(started), boot: text(boot), dir: text(dir), refreshedAt };
  } catch {
    return undefined;
  }
}

/** A lock file's content and time, or undefined if there is none. */
function readFile(file: string): { content: string; refreshedAt: number } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return { content: fs.readFileSync(fd, 'utf8'), refreshedAt: fs.fstatSync(fd).mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

function holderOf(read: { content: string; refreshedAt: number }, judge: Judge): Holder | undefined {
  const lock = parseLock(read.content, read.refreshedAt, judge.place);
  if (!lock) return undefined;
  const state = holderState(lock, judge, lock.place === judge.place ? procStat(lock.pid) : undefined, () => signalable(lock.pid));
  return state ? { pid: lock.pid, elsewhere: state === 'elsewhere' } : undefined;
}

interface Holder {
  pid: number;
  elsewhere: boolean;
}

/**
 * The holder of the embedded database in dataDir, if one is alive. A pid of
 * this host and PID namespace is asked directly (`holderState`). A process
 * elsewhere (another container on the same volume, another PID namespace)
 * cannot be asked: its lock counts as held while it keeps being refreshed.
 * Before, a CLI in a second container passed the lock, wrote to the database
 * the server held, and its write was lost.
 */
export function embeddedHolder(dataDir: string, now = Date.now()): Holder | undefined {
  const read = readFile(path.join(dataDir, LOCK_FILE));
  return read && holderOf(read, judgeHere(dataDir, now));
}

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dataDir: string, holder: Holder) {
    const file = path.join(dataDir, LOCK_FILE);
    super(
      holder.elsewhere
        ? `The embedded database in ${dataDir} is in use by a cardwork process in another container or PID namespace (pid ${holder.pid} there). ` +
            `Stop it first; a lock it left when it died counts as free ${STALE_MS / 1000} s after its last refresh. ` +
            `The lock is ${file}: delete it only if no cardwork server or command uses ${dataDir} in any container or host.`
        : `The embedded database in ${dataDir} is in use by a running cardwork server (pid ${holder.pid}). ` +
            'Stop that server first, or set DATABASE_URL to use a PostgreSQL server. ' +
            `The lock is ${file}: delete it only if no cardwork server or command is running on ${dataDir} (pid ${holder.pid} is then another program).`,
    );
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Creates `file` holding `content` if there is no such file, in one step: the
 * content is written to a file of its own and hard-linked to `file`, which
 * fails if `file` exists; so no one sees it half written. Where the file
 * system has no hard links, an exclusive create (a reader then may see it
 * empty for an instant: `BEING_WRITTEN_MS`).
 */
function createExclusive(file: string, content: string): boolean {
  const temporary = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, content, { flag: 'wx' });
  try {
    fs.linkSync(temporary, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  try {
    fs.writeFileSync(file, content, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Takes the lock `file` for `content` (unique to this claim): true, or the
 * live holder that has it. A stale lock is removed only by the one process
 * that takes its breaker (a lock file named after the stale lock's content,
 * taken the same way, so a breaker left by a process that died is itself
 * broken): two processes replacing the same stale lock cannot both remove
 * it, nor one of them remove the lock the other has just taken.
 */
function take(file: string, content: string, dataDir: string, deadline: number): true | Holder {
  for (;;) {
    if (createExclusive(file, content)) return true;
    const read = readFile(file);
    if (!read) continue; // released in between: try again (a lock that cannot be read throws)
    const judge = judgeHere(dataDir);
    const holder = holderOf(read, judge);
    if (holder) return holder;
    if (!parseLock(read.content, read.refreshedAt, judge.place) && judge.now - read.refreshedAt < BEING_WRITTEN_MS) {
      sleep(10);
      continue;
    }
    const breaker = path.join(dataDir, `${LOCK_FILE}.break-${createHash('sha256').update(read.content).digest('hex').slice(0, 16)}`);
    const broke = take(breaker, content, dataDir, deadline);
    if (broke === true) {
      try {
        if (readFile(file)?.content === read.content) fs.rmSync(file, { force: true });
      } finally {
        fs.rmSync(breaker, { force: true });
      }
    } else if (Date.now() > deadline) {
      return broke; // another process has been replacing this stale lock for too long
    } else {
      sleep(10);
    }
  }
}

/**
 * PGlite has no lock of its own and two processes on one data directory
 * corrupt it for good, so the server (and the CLI) claims the directory with
 * a lock file naming its pid, start time, boot, where it runs and the
 * directory, taken in one step (`take`) and refreshed while it is held.
 */
export function claimEmbedded(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const here = judgeHere(dataDir);
  const started = procStat(process.pid)?.started;
  const content = JSON.stringify({
    pid: process.pid,
    place: here.place,
    ...(started ? { started } : {}),
    ...(here.boot ? { boot: here.boot } : {}),
    ...(here.dir ? { dir: here.dir } : {}),
    claim: randomBytes(8).toString('hex'),
  });
  const taken = take(file, content, dataDir, Date.now() + CLAIM_WAIT_MS);
  if (taken !== true) throw new EmbeddedDatabaseBusyError(dataDir, taken);
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
      if (fs.readFileSync(file, 'utf8') === content) fs.unlinkSync(file);
    } catch {
      /* already gone */
    }
  };
}

export function assertEmbeddedFree(dataDir: string): void {
  const holder = embeddedHolder(dataDir);
  if (holder) throw new EmbeddedDatabaseBusyError(dataDir, holder);
}
