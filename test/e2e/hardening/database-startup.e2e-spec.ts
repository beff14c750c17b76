import { describe, expect, it } from '@jest/globals';
import { as, createTestApp } from '../../support/test-app.js';
import { TcpRelay } from '../../support/tcp-relay.js';
import { API } from '../../support/workspace-client.js';

// A server started before its database (containers started together, a
// PostgreSQL restart during a deploy) waits for it. Its own file: an app
// booted beside another in one process takes over passport's strategies,
// which are global, so the suites do not share a process with other apps.
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithServer('start-up before the database', () => {
  it('waits for a database still coming up, applies pending migrations on it, then serves', async () => {
    const relay = await TcpRelay.toDatabase(serverUrl!);
    await relay.cut();
    try {
      // The migrations run on a connection of their own before the request pool
      // opens; the first attempts are refused, as by a PostgreSQL not yet listening.
      const starting = createTestApp({ databaseUrl: (url) => relay.through(url) });
      await sleep(1500);
      await relay.restore();
      const app = await starting;
      try {
        expect((await app.http.get(`${API}/ready`)).status).toBe(200);
        const user = await app.user();
        expect((await app.http.get(`${API}/me`).set(as(user))).status).toBe(200);
      } finally {
        await app.close();
      }
    } finally {
      await relay.close();
    }
  }, 60_000);
});
