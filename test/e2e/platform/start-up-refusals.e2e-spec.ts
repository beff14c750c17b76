import { afterAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, runCli, runToExit, startServer } from '../../support/server-process.js';
import { itOnPostgres } from '../../support/on-postgres.js';

/**
 * A server that cannot serve as configured does not start (DESIGN.md §1: a
 * clear error for a bad value): one line naming the settings, exit 1, and
 * nothing left listening. Each case runs the built server on an embedded
 * database of its own, whatever DATABASE_URL says.
 */
describe('start-up refusals', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-start-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses MIGRATIONS_RUN=false while migrations are pending, naming the cure; serves once `cardwork migrate` applied them', async () => {
    const env = { DATA_DIR: dataDir(), MIGRATIONS_RUN: 'false' };
    const port = await freePort();
    const refused = await runToExit({ ...env, PORT: String(port) });
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/cardwork failed to start: \d+ migration\(s\) are not applied .*MIGRATIONS_RUN.*cardwork migrate.*pending: IdentityInit/);
    // It changed nothing: the migration then applies every one.
    const migrated = runCli(['migrate'], { DATA_DIR: env.DATA_DIR });
    expect(migrated.status).toBe(0);
    const server = await startServer(env);
    try {
      expect((await fetch(`${server.base}/ready`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('refuses a TRUST_PROXY Express would not take or that trusts every address, and an AUTH_URL that is more than an origin', async () => {
    const refusals = [
      ['TRUST_PROXY', 'true', /^cardwork failed to start: Invalid configuration: TRUST_PROXY must be false, none, a number of proxies, or a comma list .*, got "true"$/m],
      ['TRUST_PROXY', '172.17.0.1,proxy.local', /^cardwork failed to start: Invalid configuration: TRUST_PROXY must be .*, got "proxy.local"$/m],
      // The pages would still be served at the root, with forms posting there.
      ['AUTH_URL', 'https://cards.example.com/cw', /^cardwork failed to start: Invalid configuration: AUTH_URL must be an origin, scheme:\/\/host\[:port\].*, got "https:\/\/cards.example.com\/cw"$/m],
      ['AUTH_URL', 'https://cards.example.com/?tenant=a', /^cardwork failed to start: Invalid configuration: AUTH_URL must be an origin/m],
    ] as const;
    for (const [variable, value, line] of refusals) {
      const port = await freePort();
      const refused = await runToExit({ DATA_DIR: dataDir(), PORT: String(port), [variable]: value });
      expect({ value, code: refused.code }).toEqual({ value, code: 1 });
      expect(refused.output).toMatch(line);
      expect(refused.output.trim().split('\n')).toHaveLength(1);
    }
  }, 120_000);

  it('refuses a port already taken, naming HOST and PORT, or METRICS_HOST and METRICS_PORT, before the API serves', async () => {
    const taken = net.createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const takenPort = (taken.address() as net.AddressInfo).port;
    try {
      const api = await runToExit({ DATA_DIR: dataDir(), PORT: String(takenPort), HOST: '127.0.0.1' });
      expect(api.code).toBe(1);
      expect(api.output).toContain(`cardwork failed to start: cannot listen on 127.0.0.1:${takenPort} (HOST, PORT): listen EADDRINUSE`);
      const port = await freePort();
      const metrics = await runToExit({ DATA_DIR: dataDir(), PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(takenPort) });
      expect(metrics.code).toBe(1);
      expect(metrics.output).toContain(`cannot listen on 127.0.0.1:${takenPort} (METRICS_HOST, METRICS_PORT): listen EADDRINUSE`);
      // Not a word of Node's unhandled 'error' dump.
      expect(metrics.output).not.toMatch(/Unhandled 'error' event|node:events/);
    } finally {
      taken.close();
    }
  }, 120_000);
});

/**
 * A PostgreSQL the server cannot use at start: one line naming where it
 * looked (host, port, database, user; never the password), exit 1, no
 * stack. Before, Nest's ExceptionHandler ended the process with a JSON line
 * holding the stack, after 27 silent seconds of retries.
 */
describe('start-up refusals for the database', () => {
  const PASSWORD = 'Sekrit-pw-7741';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-start-db-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const refusalLines = (output: string) => output.split('\n').filter((line) => line.trim() && !line.startsWith('{'));
  const expectOneClearLine = (output: string, line: RegExp) => {
    expect(refusalLines(output)).toEqual([expect.stringMatching(line)]);
    expect(output).not.toContain(PASSWORD);
    expect(output).not.toMatch(/"stack"|\n\s+at |ExceptionHandler/);
  };

  it('waits DATABASE_START_WAIT_MS for an unreachable database, a line per failed attempt, then refuses in one line', async () => {
    const closed = await freePort();
    const env = { DATA_DIR: dataDir, DATABASE_URL: `postgres://operator:${PASSWORD}@127.0.0.1:${closed}/cardwork`, DATABASE_START_WAIT_MS: '8000' };
    const refused = await runToExit({ ...env, PORT: String(await freePort()) }, 90_000);
    expect(refused.code).toBe(1);
    // 8 s of waiting: 3 pauses of 3 s, 4 attempts.
    expectOneClearLine(
      refused.output,
      new RegExp(`^cardwork failed to start: database not reachable at 127\\.0\\.0\\.1:${closed} \\(database "cardwork", user "operator"\\) after 4 attempt\\(s\\) in (9|10) s: connect ECONNREFUSED`),
    );
    // The wait is not silent: one warning per failed attempt but the last.
    const retries = refused.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level === 40);
    expect(retries.map((line) => line.msg.replace(/: .*/, ''))).toEqual(
      Array.from({ length: 3 }, (_, i) => `database not reachable at 127.0.0.1:${closed}, retrying (${i + 1} of 3)`),
    );
  }, 120_000);

  itOnPostgres('refuses at once a database that does not exist, naming it', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = '/cardwork_no_such_db';
    url.password = PASSWORD;
    const started = Date.now();
    const refused = await runToExit({ DATA_DIR: dataDir, DATABASE_URL: url.toString(), PORT: String(await freePort()) });
    expect(refused.code).toBe(1);
    expectOneClearLine(refused.output, /^cardwork failed to start: database at .+ \(database "cardwork_no_such_db", user "[^"]+"\) refused the connection: database "cardwork_no_such_db" does not exist$/);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);
});
