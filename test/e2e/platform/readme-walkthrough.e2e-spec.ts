/**
 * README's "Walk-through with curl", run as a reader pastes it: every shell
 * block of the section, in order, under `set -euo pipefail`, from a
 * directory holding the file the import reads, on the embedded database
 * (as the section says), with the server the built program.
 *
 * Three shims stand in for what a test must not do: `npm install` (already
 * done), `npm start` (would rebuild dist/ under the other test files: the
 * built server instead, as its `start` script runs it), and `npx cardwork`
 * (bin/cardwork.js, the program npx would find); and the file the section
 * attaches by URL is served from loopback (no internet here). Every curl reports its
 * status on stderr, and each must be a success: `curl -s` alone would let
 * a 4xx through, its problem JSON then read as `undefined` ids further down.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../support/server-process.js';

const root = path.resolve(import.meta.dirname, '../../..');
const FILE_URL = 'https://raw.githubusercontent.com/nodejs/node/main/LICENSE';

/** The shell blocks of README's walk-through section (up to the next `## ` heading), in order. */
function walkthroughBlocks(): string {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Walk-through with curl'));
  if (!section) throw new Error('README has no "Walk-through with curl" section');
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]).join('\n');
}

const SHIMS = `set -euo pipefail
npm() {
  case "$1" in
    install) ;;
    start) exec node "$CARDWORK_ROOT/dist/src/main.js" ;;
    *) echo "walk-through: unexpected npm $*" >&2; return 1 ;;
  esac
}
npx() {
  if [ "$1" = cardwork ]; then shift; node "$CARDWORK_ROOT/bin/cardwork.js" "$@"; else echo "walk-through: unexpected npx $*" >&2; return 1; fi
}
curl() { command curl -w '%{stderr}HTTP %{http_code} %{method} %{url_effective}\\n' "$@"; }
`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBash(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const proc = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c) => (stdout += c));
    proc.stderr.on('data', (c) => (stderr += c));
    // The whole group: a script stopped half-way leaves its background server behind.
    const timer = setTimeout(() => process.kill(-proc.pid!, 'SIGKILL'), timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        /* the group is gone already */
      }
      resolve({ code, stdout, stderr });
    });
  });
}

/** Serves a small text file at any path, on loopback: the walk-through's file by URL. */
async function licenseServer(): Promise<{ url: string; close(): void }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('Copyright Node.js contributors. All rights reserved.\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/LICENSE`, close: () => server.close() };
}

describe("README's walk-through with curl", () => {
  let dir: string;
  let run: Run;

  beforeAll(async () => {
    const license = await licenseServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-readme-'));
    fs.mkdirSync(path.join(dir, 'docs/examples'), { recursive: true });
    // What the section reads from the repository's root, where it says to run it.
    for (const file of ['README.md', 'docs/examples/cards.csv']) fs.copyFileSync(path.join(root, file), path.join(dir, file));
    const port = await freePort();
    const blocks = walkthroughBlocks();
    expect(blocks).toContain(FILE_URL);
    const script = SHIMS + blocks.replaceAll('localhost:3000', `localhost:${port}`).replaceAll(FILE_URL, license.url);
    run = await runBash(script, dir, {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      CARDWORK_ROOT: root,
      DATA_DIR: path.join(dir, 'data'),
      TMPDIR: dir, // the section's `mktemp -d` (its fresh DATA_DIR) made where afterAll removes it
      PORT: String(port),
      LOG_LEVEL: 'warn',
      FILE_URL_ALLOW_PRIVATE: 'true', // the loopback server above
    }, 240_000).finally(() => license.close());
  }, 300_000);

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('runs to the end, every request a success', () => {
    const statuses = [...run.stderr.matchAll(/^HTTP (\d{3}) (\S+) (\S+)$/gm)]
      .map(([, status, method, url]) => ({ status: Number(status), request: `${method} ${url}` }))
      .filter((s) => s.status !== 0); // the wait for the server to answer
    const context = `stderr:\n${run.stderr.slice(-4000)}\nstdout:\n${run.stdout.slice(-4000)}`;
    expect({ code: run.code, context: run.code === 0 ? '' : context }).toEqual({ code: 0, context: '' });
    expect(statuses.filter((s) => s.status >= 400)).toEqual([]);
    expect(statuses.length).toBeGreaterThan(50);
  });

  it('shows what its comments say it shows', () => {
    expect(run.stdout).toContain('"username":"alice"'); // GET /me
    expect(run.stdout).toContain('"title":"Roadmap"');
    expect(run.stdout).toMatch(/"created":2,"updated":0/); // the import of docs/examples/cards.csv
    expect(run.stdout).toMatch(/^Idempotent-Replayed: true\r?$/im); // the retried creation with its Idempotency-Key
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('hello');
  });
});
