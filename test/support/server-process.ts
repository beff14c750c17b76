import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './test-db.js';

// The built server (dist/src/main.js) as production runs it, for the tests that
// need a real process: signals, several instances on one database. `npm test`
// builds dist/ before the suites run.
const root = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(root, 'dist/src/main.js');
const CLI = path.join(root, 'bin/cardwork.js');

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A database for server processes: a clone of the template on DATABASE_URL, or an embedded one in a temporary directory. */
export interface ProcessDatabase {
  env: Record<string, string>;
  embedded: boolean;
  /** Creates a user with the CLI, as an operator would; returns its API key. */
  createUser(username: string): { id: number; apiKey: string };
  drop(): Promise<void>;
}

export async function processDatabase(): Promise<ProcessDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-proc-'));
  const db = serverUrl ? await createTestDatabase(serverUrl) : undefined;
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) };
  return {
    env,
    embedded: !db,
    createUser(username) {
      const r = runCli(['user', 'create', '--username', username, '--email', `${username}@example.test`], env);
      if (r.status !== 0) throw new Error(`cardwork user create failed: ${r.stderr}`);
      const created = JSON.parse(r.stdout.trim());
      return { id: created.id, apiKey: created.api_key };
    },
    async drop() {
      await db?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The built server started on `env`: everything it writes is kept, and its exit awaited. */
function spawnMain(env: Record<string, string>) {
  const proc = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { proc, output: () => out, exited };
}

/** Runs the built server until it exits by itself (a refused start): its exit code and everything it wrote. */
export async function runToExit(env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  const { proc, output, exited } = spawnMain(env);
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const { code } = await exited;
  clearTimeout(timer);
  return { code, output: output() };
}

/** `cardwork <args>` against `env`, as an operator runs it. */
export function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface ServerProcess {
  proc: ChildProcess;
  port: number;
  base: string;
  /** Everything the process wrote on stdout and stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  stop(): Promise<void>;
}

export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const { proc, output, exited } = spawnMain({ ...env, PORT: String(port), HOST: '127.0.0.1' });
  const base = `http://127.0.0.1:${port}/api/1.0`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${output()}`);
    if (i > 600) throw new Error(`server did not start: ${output()}`);
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    proc,
    port,
    base,
    output,
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
