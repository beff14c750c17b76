import { afterAll, beforeAll, expect } from '@jest/globals';
import pg from 'pg';
import { describeOnPostgres, itOnPostgres } from '../../support/on-postgres.js';
import { processDatabase, startServer, type ProcessDatabase } from '../../support/server-process.js';

// An instance that freezes (SIGSTOP here; a paused VM, a lost network) in the
// middle of a transaction (docs/RELIABILITY.md, "A frozen instance lets go
// of its locks"): PostgreSQL ends its session after
// DATABASE_STATEMENT_TIMEOUT_MS idle in the transaction, so the rows it held
// are free again for the other instances; resumed, its request is a 503 and
// nothing of it is written. Before, the session stayed "idle in
// transaction", holding its locks, until TCP gave up after two hours.

const TIMEOUT_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

describeOnPostgres('an instance frozen in the middle of a transaction', () => {
  let db: ProcessDatabase;
  let apiKey: string;

  beforeAll(async () => {
    db = await processDatabase();
    apiKey = db.createUser('frozen').apiKey;
  });
  afterAll(() => db?.drop());

  itOnPostgres('has its session ended within DATABASE_STATEMENT_TIMEOUT_MS, its locks freed, and answers 503 once resumed', async () => {
    const server = await startServer({ ...db.env, DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    const url = db.env.DATABASE_URL;
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server.base}${path}`, {
        method,
        headers: { 'X-Api-Key': apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const holder = await connect(url);
    const watcher = await connect(url);
    try {
      const team = (await (await call('POST', '/organizations', { name: 'Team' })).json()) as { id: number };
      const project = (await (await call('POST', `/organizations/${team.id}/projects`, { title: 'Project' })).json()) as { top_level_card_id: number };
      const created = await call('POST', `/cards/${project.top_level_card_id}/children`, { title: 'before' });
      expect(created.status).toBe(201);
      const card = (await created.json()) as { id: number };

      // The update waits for the card's row, held by another transaction, inside its own.
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
      const update = call('PUT', `/cards/${card.id}`, { title: 'frozen' });
      const waiting = async () =>
        Number((await watcher.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n);
      for (let i = 0; i < 200 && (await waiting()) === 0; i++) await sleep(20);
      expect(await waiting()).toBe(1);

      // Frozen while it waits; the row then comes to it: its session holds the row, idle in its transaction.
      server.proc.kill('SIGSTOP');
      await holder.query('COMMIT');
      const released = Date.now();

      // Another instance's write to the row gets it once PostgreSQL has ended the frozen session.
      const other = await connect(url);
      try {
        await other.query('BEGIN');
        await other.query(`SET LOCAL lock_timeout = ${TIMEOUT_MS * 3}`);
        await other.query('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
        expect(Date.now() - released).toBeLessThan(TIMEOUT_MS + 2000);
        await other.query('ROLLBACK');
      } finally {
        await other.end();
      }
      const idleInTransaction = await watcher.query(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
      );
      expect(Number(idleInTransaction.rows[0].n)).toBe(0);

      // Resumed: its request is a 503 problem+json, nothing of it written, and the pool serves again.
      server.proc.kill('SIGCONT');
      const answer = await update;
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(((await (await call('GET', `/cards/${card.id}`)).json()) as { title: string }).title).toBe('before');
      for (let i = 0; i < 5; i++) expect((await call('GET', '/me')).status).toBe(200);
      expect((await call('PUT', `/cards/${card.id}`, { title: 'after' })).status).toBe(200);
      expect(server.output()).not.toMatch(/"statusCode":500/);
    } finally {
      server.proc.kill('SIGCONT');
      await holder.end().catch(() => undefined);
      await watcher.end();
      await server.stop();
    }
  }, 60_000);
});
