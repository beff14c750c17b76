import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { describeOnPostgres } from '../../support/on-postgres.js';
import { processDatabase, startServer, type ProcessDatabase, type ServerProcess } from '../../support/server-process.js';

// The built server's stdout is one JSON object per line (README, "Logs"),
// failed statements included: a log shipper reads every line. A statement
// that fails is written as a JSON line at warn, or at debug when the server
// handles its SQLSTATE itself (retried, mapped to a 4xx or a 503), never as
// the ORM's own coloured, multi-line console text. The failure here is a
// statement cancelled at DATABASE_STATEMENT_TIMEOUT_MS, which needs a
// second connection to hold a row: a PostgreSQL server only.

const API_HEADERS = (key: string) => ({ 'X-Api-Key': key, 'Content-Type': 'application/json' });

// Holding a row while the server runs needs a PostgreSQL server.
describeOnPostgres('the server log stream', () => {
  let db: ProcessDatabase;
  let server: ServerProcess;
  let apiKey: string;

  beforeAll(async () => {
    db = await processDatabase();
    apiKey = db.createUser('logged').apiKey;
    server = await startServer({ ...db.env, LOG_LEVEL: 'debug', DATABASE_STATEMENT_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await server?.stop();
    await db.drop();
  });

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.base}${path}`, { method: 'POST', headers: API_HEADERS(apiKey), body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, number>;
  };

  it('writes a failed statement as a JSON line, and nothing but JSON lines', async () => {
    const team = await post('/organizations', { name: 'Logged team' });
    const project = await post(`/organizations/${team.id}/projects`, { title: 'Logged project' });
    const card = await post(`/cards/${project.top_level_card_id}/children`, { title: 'held' });

    const holder = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM cards.cards WHERE id = $1 FOR UPDATE', [card.id]);
      const res = await fetch(`${server.base}/cards/${card.id}`, { method: 'PUT', headers: API_HEADERS(apiKey), body: JSON.stringify({ title: 'after' }) });
      expect(res.status).toBe(503);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // Lines are written at the latest 250 ms later (LOG_FLUSH_MS).
    await new Promise((r) => setTimeout(r, 600));

    const lines = server.output().split('\n').filter((line) => line.trim() !== '');
    const notJson = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    const failed = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.sqlState === '57014');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 20, msg: expect.stringMatching(/statement failed/) });
    expect(String(failed[0].statement)).toMatch(/FOR UPDATE|UPDATE/);
  });
});
