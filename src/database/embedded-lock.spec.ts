import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import {
  claimEmbedded,
  EmbeddedDatabaseBusyError,
  embeddedHolder,
  holderState,
  parseProcStat,
  type Judge,
  type Lock,
} from './embedded-lock.js';

const dirs: string[] = [];
function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-lock-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const children: number[] = [];
afterAll(() => {
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (compiled) fs.rmSync(path.dirname(compiled), { recursive: true, force: true });
});

const lockFile = (dir: string) => path.join(dir, 'server.pid');
/** A lock as this process writes it, with another pid (and place, when given). */
function lockOf(dir: string, pid: number, place?: string): void {
  fs.writeFileSync(lockFile(dir), JSON.stringify({ pid, place: place ?? placeHere() }));
}
/** Where this process runs, as its own lock says. */
function placeHere(): string {
  const dir = dataDir();
  const release = claimEmbedded(dir);
  const { place } = JSON.parse(fs.readFileSync(lockFile(dir), 'utf8')) as { place: string };
  release();
  return place;
}
/** A pid no process has now. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('the embedded database lock', () => {
  it('is held by a live process of this host and PID namespace, asked by its pid', () => {
    const dir = dataDir();
    lockOf(dir, process.ppid);
    expect(embeddedHolder(dir)).toEqual({ pid: process.ppid, elsewhere: false });
    expect(() => claimEmbedded(dir)).toThrow(EmbeddedDatabaseBusyError);
    lockOf(dir, deadPid());
    expect(embeddedHolder(dir)).toBeUndefined();
    // A lock file of the old form (the pid alone) is this place's.
    fs.writeFileSync(lockFile(dir), String(process.ppid));
    expect(embeddedHolder(dir)).toEqual({ pid: process.ppid, elsewhere: false });
  });

  it('is held by a process elsewhere (another container, another PID namespace) while its lock is refreshed, whatever its pid says here', () => {
    const dir = dataDir();
    lockOf(dir, deadPid(), 'another-container pid:[4026532000]');
    expect(embeddedHolder(dir)).toEqual({ pid: expect.any(Number), elsewhere: true });
    expect(() => claimEmbedded(dir)).toThrow(/another container or PID namespace/);
    // Not refreshed for 15 s: its holder died, and the lock is free.
    const old = new Date(Date.now() - 16_000);
    fs.utimesSync(lockFile(dir), old, old);
    expect(embeddedHolder(dir)).toBeUndefined();
    const release = claimEmbedded(dir);
    expect(JSON.parse(fs.readFileSync(lockFile(dir), 'utf8')).pid).toBe(process.pid);
    release();
    expect(fs.existsSync(lockFile(dir))).toBe(false);
  });

  it("is released only by its holder: a lock someone else wrote since stays", () => {
    const dir = dataDir();
    const release = claimEmbedded(dir);
    fs.writeFileSync(lockFile(dir), JSON.stringify({ pid: process.ppid, place: 'elsewhere' }));
    release();
    expect(fs.existsSync(lockFile(dir))).toBe(true);
  });
});

describe('parseProcStat', () => {
  it('reads the state (field 3) and the start time (field 22), counting fields from the last parenthesis of the command', () => {
    const rest = 'S 1 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 233981 3133440 415';
    expect(parseProcStat(`42 (node) ${rest}`)).toEqual({ state: 'S', started: '233981' });
    expect(parseProcStat(`42 (a) b (c)) ${rest.replace(/^S/, 'Z')}`)).toEqual({ state: 'Z', started: '233981' });
    expect(parseProcStat('42 (node) S 1 1')).toBeUndefined();
    expect(parseProcStat('')).toBeUndefined();
  });
});

describe('holderState', () => {
  const judge: Judge = { pid: 1000, place: 'host pid:[1]', boot: 'boot-a', dir: '1:2', now: 100_000 };
  const lock: Lock = { pid: 42, place: 'host pid:[1]', started: '500', boot: 'boot-a', dir: '1:2', refreshedAt: 99_000 };
  const running = { state: 'S', started: '500' };
  const never = () => {
    throw new Error('asked for a signal while /proc answered');
  };

  it('is alive here for a process of this place with the start time, boot and directory its lock recorded', () => {
    expect(holderState(lock, judge, running, never)).toBe('here');
    // Refreshed long ago, by a process here that is alive: held (its event loop may be busy).
    expect(holderState({ ...lock, refreshedAt: 0 }, judge, running, never)).toBe('here');
  });

  it('is dead for a zombie, another process with the pid, or a pid of another boot', () => {
    expect(holderState(lock, judge, { state: 'Z', started: '500' }, never)).toBeUndefined();
    expect(holderState(lock, judge, { state: 'S', started: '501' }, never)).toBeUndefined();
    expect(holderState({ ...lock, boot: 'boot-b' }, judge, running, never)).toBeUndefined();
    expect(holderState({ ...lock, pid: judge.pid }, judge, running, never)).toBeUndefined();
  });

  it("is dead for a copied directory's lock that is not refreshed: its holder refreshes the original", () => {
    const copied = { ...lock, dir: '1:3' };
    expect(holderState({ ...copied, refreshedAt: judge.now - 16_000 }, judge, running, never)).toBeUndefined();
    // Just copied: it cannot be told from a holder of this directory yet.
    expect(holderState(copied, judge, running, never)).toBe('here');
  });

  it('asks the pid alone where /proc does not answer, and for a lock of an older server (no start time)', () => {
    expect(holderState(lock, judge, undefined, () => true)).toBe('here');
    expect(holderState(lock, judge, undefined, () => false)).toBeUndefined();
    const older: Lock = { pid: 42, place: judge.place, refreshedAt: 0 };
    expect(holderState(older, judge, { state: 'S', started: '1' }, never)).toBe('here');
    expect(holderState(older, judge, { state: 'Z', started: '1' }, never)).toBeUndefined();
  });

  it('is alive elsewhere while refreshed within 15 s, whatever its pid, start time, boot or directory say here', () => {
    const elsewhere = { ...lock, place: 'other pid:[2]', boot: 'boot-b', dir: '9:9' };
    expect(holderState(elsewhere, judge, undefined, never)).toBe('elsewhere');
    expect(holderState({ ...elsewhere, refreshedAt: judge.now - 15_000 }, judge, undefined, never)).toBeUndefined();
  });
});

/** embedded-lock.ts as JavaScript, for child processes to claim with (it imports only Node's modules). */
let compiled: string | undefined;
function lockModule(): string {
  if (!compiled) {
    const source = fs.readFileSync(path.join(import.meta.dirname, 'embedded-lock.ts'), 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    compiled = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-lock-module-')), 'embedded-lock.mjs');
    fs.writeFileSync(compiled, outputText);
  }
  return pathToFileURL(compiled).href;
}

/** A child that claims `dir`, prints 'claimed' and holds it until killed. */
function holdScript(): string {
  return `const { claimEmbedded } = await import(${JSON.stringify(lockModule())}); claimEmbedded(process.argv[1]); console.log('claimed'); setInterval(() => {}, 1e6);`;
}
async function printed(child: ReturnType<typeof spawn>, line: string): Promise<void> {
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c) => (out += c) && out.includes(line) && resolve());
    child.stderr!.on('data', (c) => (out += c));
    child.once('exit', () => reject(new Error(`child exited before '${line}': ${out}`)));
  });
}
const procState = (pid: number): string | undefined => {
  try {
    return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state;
  } catch {
    return undefined;
  }
};
const lockedPid = (dir: string): number => JSON.parse(fs.readFileSync(lockFile(dir), 'utf8')).pid;
const onLinux = fs.existsSync('/proc/self/stat') ? describe : describe.skip;

describe('claims racing for real', () => {
  it('leave exactly one holder each time, on a free directory and on one with a stale lock', async () => {
    const rounds = 24;
    const racers = 4;
    const roundDirs = Array.from({ length: rounds }, () => dataDir());
    // Every other round starts on a stale lock (a dead pid of this place), which every racer replaces at once.
    roundDirs.forEach((dir, round) => round % 2 && lockOf(dir, deadPid()));
    const startAt = Date.now() + 2_000;
    const race = `
      const { claimEmbedded } = await import(${JSON.stringify(lockModule())});
      const dirs = ${JSON.stringify(roundDirs)};
      const held = [];
      const nap = (ms) => ms > 0 && Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
      for (const [round, dir] of dirs.entries()) {
        const at = ${startAt} + round * 60;
        nap(at - Date.now() - 5);
        while (Date.now() < at);
        try {
          held.push(claimEmbedded(dir));
          console.log(round, 'won');
        } catch (error) {
          console.log(round, /in use by a running cardwork server/.test(error.message) ? 'busy' : error.message);
        }
      }
      // Held until every racer has had every round (the parent then stops them all): a racer
      // that started late on a loaded machine would otherwise find an early one's locks
      // stale, its holder gone, and rightly take them.
      console.log('done');
      nap(50_000);`;
    const children = Array.from({ length: racers }, () => {
      const r = spawn(process.execPath, ['--input-type=module', '-e', race], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      const done = new Promise<void>((resolve) => r.stdout.on('data', (c) => (out += c) && /^done$/m.test(out) && resolve()));
      const exited = new Promise<void>((resolve) => r.once('exit', () => resolve()));
      return { r, done: Promise.race([done, exited]), exited, output: () => out };
    });
    await Promise.all(children.map((c) => c.done));
    for (const c of children) c.r.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    const outputs = children.map((c) => c.output());
    const outcomes = roundDirs.map((_, round) =>
      outputs.flatMap((out) => out.split('\n').filter((line) => line.startsWith(`${round} `)).map((line) => line.slice(`${round} `.length))),
    );
    for (const outcome of outcomes) {
      expect(outcome).toHaveLength(racers);
      expect(outcome.filter((o) => o === 'won')).toHaveLength(1);
      expect(outcome.filter((o) => o === 'busy')).toHaveLength(racers - 1);
    }
    // No breaker or temporary file is left behind.
    for (const dir of roundDirs) expect(fs.readdirSync(dir)).toEqual(['server.pid']);
  }, 60_000);
});

onLinux('a holder that is gone though its pid answers', () => {
  it('is a zombie: a server killed with SIGKILL whose parent has not reaped it yet', async () => {
    const dir = dataDir();
    // The holder's parent becomes `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', '"$0" --input-type=module -e "$1" "$2" & exec sleep 120', process.execPath, holdScript(), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(parent.pid!);
    await printed(parent, 'claimed');
    const pid = lockedPid(dir);
    children.push(pid);
    expect(() => claimEmbedded(dir)).toThrow(
      new RegExp(`in use by a running cardwork server \\(pid ${pid}\\).*The lock is ${lockFile(dir)}: delete it only if no cardwork server or command is running on ${dir}`),
    );
    process.kill(pid, 'SIGKILL');
    while (procState(pid) !== 'Z') await new Promise((resolve) => setTimeout(resolve, 10));
    const release = claimEmbedded(dir);
    expect(lockedPid(dir)).toBe(process.pid);
    release();
  }, 30_000);

  it('is another program that has its pid now (after a crash or a reboot)', () => {
    const dir = dataDir();
    const parent = parseProcStat(fs.readFileSync(`/proc/${process.ppid}/stat`, 'utf8'))!;
    const lock = JSON.parse(JSON.stringify({ pid: process.ppid, place: placeHere(), started: parent.started }));
    fs.writeFileSync(lockFile(dir), JSON.stringify(lock));
    expect(embeddedHolder(dir)).toEqual({ pid: process.ppid, elsewhere: false });
    // The same pid, started at another time: another process.
    fs.writeFileSync(lockFile(dir), JSON.stringify({ ...lock, started: String(Number(parent.started) + 1) }));
    expect(embeddedHolder(dir)).toBeUndefined();
    const release = claimEmbedded(dir);
    expect(lockedPid(dir)).toBe(process.pid);
    release();
  });

  it("is a running server whose DATA_DIR was copied (cp -a): the copy's lock is free once it goes unrefreshed", async () => {
    const original = dataDir();
    const holder = spawn(process.execPath, ['--input-type=module', '-e', holdScript(), original], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(holder.pid!);
    await printed(holder, 'claimed');
    const copy = path.join(dataDir(), 'copy');
    expect(spawnSync('cp', ['-a', original, copy]).status).toBe(0);
    const old = new Date(Date.now() - 16_000);
    fs.utimesSync(lockFile(copy), old, old);
    expect(embeddedHolder(copy)).toBeUndefined();
    const release = claimEmbedded(copy);
    expect(lockedPid(copy)).toBe(process.pid);
    release();
    // The original stays held by its running server.
    expect(embeddedHolder(original)).toEqual({ pid: holder.pid, elsewhere: false });
    expect(() => claimEmbedded(original)).toThrow(EmbeddedDatabaseBusyError);
  }, 30_000);
});
