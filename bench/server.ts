import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A free TCP port on 127.0.0.1 (asked from the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A user and its first API key, made with the CLI of the checkout at `root`
 * (`cardwork user create`) on the database at `databaseUrl`.
 */
export function createUser(root: string, databaseUrl: string, username: string): { id: number; api_key: string } {
  const args = ['user', 'create', '--username', username, '--email', `${username}@example.com`];
  const r = spawnSync(process.execPath, [path.join(root, 'bin/cardwork.js'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`cardwork ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { id: number; api_key: string };
}

export interface RunningServer {
  pid: number;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the built server (`dist/src/main.js`) as production runs it, on
 * 127.0.0.1 and the given database; it applies the migrations at start.
 */
export async function startServer(root: string, databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    // BENCH_SERVER_NODE_ARGS: extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    [...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(root, 'dist/src/main.js')],
    {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: path.join(os.tmpdir(), `cardwork-bench-${process.pid}`),
      MIGRATIONS_RUN: 'true',
      // The bench sends far more than the default 6000 requests a minute with one key.
      RATE_LIMIT_PER_MINUTE: '10000000',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  child.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 60 s:\n${log}`)), 60_000);
    const check = () => {
      if (/listening on http/.test(log)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code} before listening:\n${log}`));
    });
  });

  return {
    pid: child.pid!,
    port,
    output: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref());
      if ((await Promise.race([exited, timeout])) === 'timeout') {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
