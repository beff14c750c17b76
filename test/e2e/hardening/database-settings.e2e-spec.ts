import { describe, expect, it } from '@jest/globals';
import { adminQuery } from '../../support/test-db.js';
import { processDatabase, startServer } from '../../support/server-process.js';

/**
 * A DBA's own settings on the database or the role (ALTER DATABASE/ROLE …
 * SET) do not change what the app reads or where it keeps its tables
 * (docs/RELIABILITY.md, "What the database needs"). Each case runs the built
 * server and CLI, as an operator does, on a database of its own.
 */
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;

const databaseOf = (url: string) => new URL(url).pathname.slice(1);

describeWithServer('a database with a DBA\'s settings', () => {
  /**
   * Connections pin DateStyle and IntervalStyle: with the database's
   * `datestyle='German'` pg's parser read every timestamp as null (500s on
   * /me, /organizations, /me/api-keys after committing the key; 1970-01-01
   * in card JSON), and `cardwork user create` crashed.
   */
  it("reads timestamps right under datestyle='German' and intervalstyle='sql_standard': the CLI, the API, card JSON", async () => {
    const db = await processDatabase();
    const name = databaseOf(db.env.DATABASE_URL);
    await adminQuery(serverUrl!, `ALTER DATABASE "${name}" SET datestyle = 'German'`);
    await adminQuery(serverUrl!, `ALTER DATABASE "${name}" SET intervalstyle = 'sql_standard'`);
    const server = await startServer(db.env).catch(async (error) => {
      await db.drop();
      throw error;
    });
    try {
      const before = Date.now() - 60_000;
      const { apiKey } = db.createUser('dora');
      const call = async (method: string, route: string, body?: unknown) => {
        const res = await fetch(`${server.base}${route}`, {
          method,
          headers: { 'X-Api-Key': apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> & Array<Record<string, unknown>> };
      };
      const recent = (value: unknown) => typeof value === 'string' && Date.parse(value) > before && Date.parse(value) < Date.now() + 60_000;
      const me = await call('GET', '/me');
      expect(me.status).toBe(200);
      const org = await call('POST', '/organizations', { name: 'Team' });
      expect(org.status).toBe(201);
      const project = await call('POST', `/organizations/${org.body.id}/projects`, { title: 'P' });
      expect(project.status).toBe(201);
      expect(recent(project.body.created_at)).toBe(true);
      const all = await call('GET', '/projects/all');
      expect(all.status).toBe(200);
      const card = await call('POST', `/cards/${project.body.top_level_card_id}/children`, { title: 'C' });
      expect(card.status).toBe(201);
      const read = await call('GET', `/cards/${card.body.id}`);
      expect(read.status).toBe(200);
      expect([recent(read.body.created_at), recent(read.body.updated_at)]).toEqual([true, true]);
      const stream = await call('GET', `/cards/${card.body.id}/stream`);
      expect(stream.status).toBe(200);
      const key = await call('POST', '/me/api-keys', { name: 'laptop' });
      expect(key.status).toBe(201);
      const keys = await call('GET', '/me/api-keys');
      expect(keys.status).toBe(200);
    } finally {
      await server.stop();
      await db.drop();
    }
  }, 120_000);
});

