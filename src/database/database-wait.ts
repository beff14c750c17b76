import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { isDatabaseUnavailable } from '../shared/persistence/database-availability.js';

/** How long a start waits for a PostgreSQL that is not reachable yet: attempts, and the pause between two. */
export interface StartWait {
  attempts: number;
  delayMs: number;
}

/** The pause between two attempts to reach a database still starting up. */
const RETRY_DELAY_MS = 3_000;

/**
 * A database still starting up (containers started together, a restart
 * during a deploy) is waited for up to `waitMs` (DATABASE_START_WAIT_MS,
 * 27 s by default: 10 attempts 3 s apart); 0 tries once.
 */
export function startWait(waitMs: number): StartWait {
  return { attempts: 1 + Math.ceil(waitMs / RETRY_DELAY_MS), delayMs: RETRY_DELAY_MS };
}

/** A start refused for the database: its message is the one line the server prints. */
export class DatabaseStartError extends Error {}

/**
 * Runs `open` until it succeeds, again after `wait.delayMs` while the
 * database is not reachable (`isDatabaseUnavailable`), at most
 * `wait.attempts` times; `onRetry(n, of, error)` is told of each retry.
 * Any other error, or the last attempt's, is thrown as it came.
 */
export async function retryWhileUnavailable<T>(
  open: () => Promise<T>,
  wait: StartWait,
  onRetry: (n: number, of: number, error: unknown) => void = () => undefined,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await open();
    } catch (error) {
      if (n >= wait.attempts || !isDatabaseUnavailable(error)) throw error;
      onRetry(n, wait.attempts - 1, error);
      await delay(wait.delayMs);
    }
  }
}

/**
 * Waits for the PostgreSQL of `url` to accept a connection, before the app
 * is built: while it does not, `log` gets one line per failed attempt
 * ("database not reachable at host:port, retrying (n of m)"); when it never
 * does, or refuses us (no such database, a wrong password, SSL not offered),
 * a DatabaseStartError names the host, port, database and user, never the
 * password. Inside Nest the same failure ended the process from Nest's
 * ExceptionHandler, with a stack and after 27 silent seconds, before the
 * start's one-line refusal could run.
 */
export async function waitForDatabase(url: string, log: (message: string) => void, wait: StartWait): Promise<void> {
  const { address, names } = databaseLocation(url);
  const started = Date.now();
  try {
    await retryWhileUnavailable(
      () => connectOnce(url),
      wait,
      (n, of, error) => log(`database not reachable at ${address}, retrying (${n} of ${of}): ${reasonOf(error)}`),
    );
  } catch (error) {
    const seconds = Math.round((Date.now() - started) / 1000);
    const why = isDatabaseUnavailable(error) ? `not reachable at ${address} (${names}) after ${wait.attempts} attempt(s) in ${seconds} s` : `at ${address} (${names}) refused the connection`;
    throw new DatabaseStartError(`database ${why}: ${reasonOf(error)}`);
  }
}

/** One connection opened and closed, with the pool's connection settings (DATABASE_URL's SSL options included). */
async function connectOnce(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Where a PostgreSQL URL points, without its password: `host:port`, and the database and user it names. */
export function databaseLocation(url: string): { address: string; names: string } {
  const u = new URL(url);
  const user = decodeURIComponent(u.username);
  // PostgreSQL's default database is the user's name.
  const database = decodeURIComponent(u.pathname.slice(1)) || user;
  const host = u.searchParams.get('host') ?? (u.hostname || 'localhost');
  const names = [database && `database "${database}"`, user && `user "${user}"`].filter(Boolean).join(', ');
  return { address: `${host}:${u.port || 5432}`, names: names || 'the default database and user' };
}

/** The driver's message; a connection refused on every address of a name (AggregateError) has none, only a code. */
function reasonOf(error: unknown): string {
  const e = error as { message?: unknown; code?: unknown };
  if (typeof e?.message === 'string' && e.message) return e.message;
  return typeof e?.code === 'string' ? e.code : String(error);
}
