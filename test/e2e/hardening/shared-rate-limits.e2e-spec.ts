import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { awayFromWindowEdge } from '../../support/clock-edges.js';
import { describeOnPostgres } from '../../support/on-postgres.js';
import { processDatabase, startServer, type ProcessDatabase, type ServerProcess } from '../../support/server-process.js';

// Two instances of the built server on one database (issue 13, DESIGN.md §3,
// §10): the counters live in PostgreSQL, so a client cannot double its limit by
// spreading its requests over the instances behind a balancer.
const LIMIT = 20;

// Two instances on one database need a PostgreSQL server.
describeOnPostgres('rate limits shared by two instances', () => {
  let db: ProcessDatabase;
  let servers: ServerProcess[];
  let apiKey: string;

  beforeAll(async () => {
    db = await processDatabase();
    apiKey = db.createUser('limited').apiKey;
    const env = { ...db.env, RATE_LIMIT_PER_MINUTE: String(LIMIT) };
    servers = [await startServer(env), await startServer(env)];
  });
  afterAll(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop()));
    await db.drop();
  });

  it('holds the per-credential limit across both instances', async () => {
    await awayFromWindowEdge();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 6; i++) {
      const res = await fetch(`${servers[i % 2].base}/me`, { headers: { 'X-Api-Key': apiKey } });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      else expect(Number(res.headers.get('ratelimit-remaining'))).toBe(LIMIT - 1 - i);
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
    expect(statuses.slice(LIMIT)).toEqual(Array(6).fill(429));
  });

  it('holds the failed-authentication limit per address across both instances', async () => {
    await awayFromWindowEdge();
    const statuses: number[] = [];
    for (let i = 0; i < 64; i++) {
      const res = await fetch(`${servers[i % 2].base}/me`, { headers: { 'X-Api-Key': `cwk_wrong${i}` } });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(401));
    expect(statuses.slice(60)).toEqual(Array(4).fill(429));
  });
});
