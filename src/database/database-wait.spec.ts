import net from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { databaseLocation, DatabaseStartError, retryWhileUnavailable, startWait, waitForDatabase } from './database-wait.js';

/** A local port nothing listens on: a connection there is refused at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('waitForDatabase', () => {
  it('logs each failed attempt but the last, then refuses naming host, port, database and user, never the password', async () => {
    const port = await closedPort();
    const logged: string[] = [];
    const refusal = await waitForDatabase(`postgres://ops:S3cret-pw@127.0.0.1:${port}/cards`, (m) => logged.push(m), { attempts: 3, delayMs: 10 }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(DatabaseStartError);
    expect((refusal as Error).message).toMatch(
      new RegExp(`^database not reachable at 127\\.0\\.0\\.1:${port} \\(database "cards", user "ops"\\) after 3 attempt\\(s\\) in \\d+ s: connect ECONNREFUSED`),
    );
    expect(logged.map((m) => m.replace(/: .*/, ''))).toEqual([1, 2].map((n) => `database not reachable at 127.0.0.1:${port}, retrying (${n} of 2)`));
    expect([...logged, (refusal as Error).message].join('\n')).not.toContain('S3cret-pw');
  });
});

describe('startWait', () => {
  it('covers DATABASE_START_WAIT_MS with 3 s pauses: 27 s by default is 10 attempts, 0 is one, a part of a pause one more', () => {
    expect([27_000, 0, 1, 3_000, 8_000].map((ms) => startWait(ms))).toEqual(
      [10, 1, 2, 2, 4].map((attempts) => ({ attempts, delayMs: 3_000 })),
    );
  });
});

describe('retryWhileUnavailable', () => {
  it('tries again only while the database is unavailable', async () => {
    let calls = 0;
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const opened = await retryWhileUnavailable(async () => (++calls < 3 ? Promise.reject(refused) : 'open'), { attempts: 5, delayMs: 1 });
    expect({ opened, calls }).toEqual({ opened: 'open', calls: 3 });

    // A host name that does not resolve yet: the database's container is not up (compose starts them together).
    calls = 0;
    const unresolved = Object.assign(new Error('getaddrinfo ENOTFOUND db'), { code: 'ENOTFOUND' });
    expect(await retryWhileUnavailable(async () => (++calls < 2 ? Promise.reject(unresolved) : 'open'), { attempts: 5, delayMs: 1 })).toBe('open');

    calls = 0;
    const missing = Object.assign(new Error('database "x" does not exist'), { code: '3D000' });
    await expect(retryWhileUnavailable(async () => (++calls, Promise.reject(missing)), { attempts: 5, delayMs: 1 })).rejects.toBe(missing);
    expect(calls).toBe(1);
  });
});

describe('databaseLocation', () => {
  it('names where a URL points without its password; PostgreSQL’s defaults where it says nothing', () => {
    expect(databaseLocation('postgres://ann:pw@db.internal:6432/cards?sslmode=verify-full')).toEqual({ address: 'db.internal:6432', names: 'database "cards", user "ann"' });
    expect(databaseLocation('postgresql://ann@db')).toEqual({ address: 'db:5432', names: 'database "ann", user "ann"' });
    expect(databaseLocation('postgres:///cards?host=/var/run/postgresql')).toEqual({ address: '/var/run/postgresql:5432', names: 'database "cards"' });
  });
});
