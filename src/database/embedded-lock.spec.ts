import { afterEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimEmbedded, EmbeddedDatabaseBusyError, embeddedHolder } from './embedded-lock.js';

const dirs: string[] = [];
function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-lock-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
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
