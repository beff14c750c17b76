import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  postgresSettings: Record<string, string>;
  commit: string;
  /** 1-minute load average when the run started (other work on the machine skews the figures). */
  loadAtStart: number;
}

function cpuModel(): string {
  try {
    const line = fs
      .readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => /^model name\s*:/.test(l));
    if (line) return line.replace(/^model name\s*:\s*/, '').trim();
  } catch {
    /* not Linux */
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

function gitCommit(cwd: string): string {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' });
  if (r.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' });
  return r.stdout.trim() + (dirty.stdout.trim() ? ' (with uncommitted changes)' : '');
}

export function machineInfo(root: string, postgres: string, postgresSettings: Record<string, string>, loadAtStart: number): MachineInfo {
  return {
    date: new Date().toISOString(),
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: cpuModel(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres,
    postgresSettings,
    commit: gitCommit(root),
    loadAtStart,
  };
}

let clockTicks: number | undefined;

export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; null if unreadable. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return (utime + stime) / ticksPerSecond();
  } catch {
    return null;
  }
}

/** Sum of CPU seconds of several processes; pids that vanished or cannot be read count 0. */
export function processesCpuSeconds(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const s = processCpuSeconds(pid);
    if (s !== null) out.set(pid, s);
  }
  return out;
}

/** Whole-machine CPU counters (jiffies) from /proc/stat: busy and total. */
export function machineCpu(): { busy: number; total: number } | null {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}
