import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

// The real programs, as a user runs them: `cardwork` (bin/cardwork.js) and the
// server (dist/src/main.js) on an embedded database in a temporary DATA_DIR.
// `npm test` builds dist/ before the suites run.
const root = path.resolve(import.meta.dirname, '../../..');
const cli = path.join(root, 'bin/cardwork.js');
const server = path.join(root, 'dist/src/main.js');

function runCli(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForHealth(base: string, proc: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}`);
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

describe('the CLI and the server on an embedded database', () => {
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-cli-'));
    env = { DATA_DIR: dataDir };
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('lists every command in --help', () => {
    const r = runCli(['--help'], env);
    expect(r.code).toBe(0);
    for (const c of ['user create', 'apikey create', 'apikey list', 'apikey revoke', 'migrate']) expect(r.stdout).toContain(c);
  });

  it('refuses unknown commands and missing options with usage and exit 2', () => {
    expect(runCli(['frobnicate'], env).code).toBe(2);
    const missing = runCli(['user', 'create', '--username', 'x'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--email');
    expect(runCli(['apikey', 'revoke', '--user', '@x', '--id', 'two'], env).code).toBe(2);
    // An option the command does not take, a stray word, a flag value it cannot read: usage, exit 2, nothing done.
    for (const args of [
      ['user', 'create', '--username', 'dave', '--email', 'd@example.com', '--passwd', 'Secret-pass1'],
      ['user', 'create', '--username', 'dave', '--email', 'd@example.com', '--admin=maybe'],
      ['user', 'create', '--username', 'dave', '--email', 'd@example.com', 'extra'],
      ['apikey', 'create', '--user', '@alice', 'extra', 'words'],
      ['migrate', '--force'],
    ]) {
      const refused = runCli(args, env);
      expect({ args, code: refused.code, stdout: refused.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(refused.stderr).toMatch(/^cardwork: (unexpected|"[a-z ]+" takes no option|--admin takes no value)/);
    }
    // A usage error is answered before the database is opened: it neither creates nor migrates one.
    expect(fs.existsSync(path.join(dataDir, 'db'))).toBe(false);
  });

  it('migrate answers one JSON line on stdout, with the names applied, and logs only on stderr', () => {
    const fresh = { DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-cli-migrate-')) };
    try {
      const migrate = runCli(['migrate'], fresh);
      expect(migrate.code).toBe(0);
      // The answer is one JSON line on stdout: how many were applied and their names, in order.
      // At the default LOG_LEVEL (info) the migrations' debug lines stay out of both streams.
      expect(migrate.stderr).toBe('');
      expect(migrate.stdout.endsWith('\n')).toBe(true);
      expect(migrate.stdout.trim().split('\n')).toHaveLength(1);
      const applied = JSON.parse(migrate.stdout);
      expect(Object.keys(applied).sort()).toEqual(['applied', 'migrations']);
      expect(applied.applied).toBeGreaterThan(0);
      expect(applied.migrations).toHaveLength(applied.applied);
      expect(applied.migrations[0]).toBe('IdentityInit1763769600000');
      for (const name of applied.migrations) expect(name).toMatch(/^[A-Za-z]+\d{13}$/);

      // Nothing pending: 0 and []. At LOG_LEVEL=debug the progress goes to stderr as JSON lines, never to stdout.
      const again = runCli(['migrate'], { ...fresh, LOG_LEVEL: 'debug' });
      expect(again.code).toBe(0);
      expect(again.stdout).toBe('{"applied":0,"migrations":[]}\n');
      const logLines = again.stderr.trim().split('\n');
      expect(logLines.length).toBeGreaterThan(0);
      for (const line of logLines) expect(JSON.parse(line)).toMatchObject({ level: expect.any(Number) });
    } finally {
      fs.rmSync(fresh.DATA_DIR, { recursive: true, force: true });
    }
  }, 120_000);

  it('creates a user, serves it, refuses while the server holds the data, and shuts down cleanly', async () => {
    const created = runCli(['user', 'create', '--username', 'alice', '--email', 'alice@example.com'], env);
    expect(created.code).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const user = JSON.parse(lines[0]);
    expect(Object.keys(user).sort()).toEqual(['api_key', 'email', 'id', 'username']);
    expect(user.api_key).toMatch(/^cwk_/);

    // A flag's value is read, not ignored: `--admin true` makes an admin, `--admin=no` does not.
    const admin = JSON.parse(runCli(['user', 'create', '--username', 'dave', '--email', 'd@example.com', '--admin', 'true'], env).stdout);
    const plain = JSON.parse(runCli(['user', 'create', '--username', 'erin', '--email', 'e@example.com', '--admin=no'], env).stdout);

    const duplicate = runCli(['user', 'create', '--username', 'alice', '--email', 'other@example.com'], env);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/already exists/);

    const port = await freePort();
    const proc = spawn(process.execPath, [server], {
      env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const base = `http://127.0.0.1:${port}/api/1.0`;
    try {
      await waitForHealth(base, proc);
      const me = await fetch(`${base}/me`, { headers: { Authorization: `Basic ${Buffer.from(`${user.api_key}:`).toString('base64')}` } });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ id: user.id, username: 'alice' });
      for (const [created, isAdmin] of [[admin, true], [plain, false]] as const) {
        const res = await fetch(`${base}/me`, { headers: { 'X-Api-Key': created.api_key } });
        expect(await res.json()).toMatchObject({ username: created.username, is_admin: isAdmin });
      }

      const busy = runCli(['apikey', 'list', '--user', '@alice'], env);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/in use by a running cardwork server/);
    } finally {
      const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    }

    const listed = runCli(['apikey', 'list', '--user', '@alice'], env);
    expect(listed.code).toBe(0);
    const keys = JSON.parse(listed.stdout);
    expect(keys).toHaveLength(1);
    expect(keys[0].last_used_at).toEqual(expect.any(String));
    expect(listed.stdout).not.toContain(user.api_key);

    const revoked = runCli(['apikey', 'revoke', '--user', '@alice', '--id', String(keys[0].id)], env);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).toEqual(expect.any(String));
  }, 120_000);

  it('refuses to start on a bad configuration value, naming the variable', () => {
    const r = spawnSync(process.execPath, [server], {
      env: { PATH: process.env.PATH ?? '', ...env, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/PORT/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
