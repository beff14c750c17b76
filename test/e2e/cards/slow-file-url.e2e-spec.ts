import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsClient, type World } from '../fields/fields-fixtures.js';

/**
 * DESIGN.md §5: a file given by URL is downloaded before the transaction
 * opens. A card creation whose file URL is slow must not hold the project's
 * counter row (or the parent's lock) while it waits, so other creations in
 * the same project go on.
 */
describe('a slow file URL on card creation', () => {
  const SLOW_MS = 3000;
  let t: TestApp;
  let ann: TestUser;
  let w: World;
  let dataDir: string;
  let source: Server;
  let slowUrl: string;
  let requested: () => void;
  const slowRequested = new Promise<void>((resolve) => (requested = resolve));

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-slow-url-'));
    source = createServer((_req, res) => {
      requested();
      setTimeout(() => {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 5 });
        res.end('hello');
      }, SLOW_MS);
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    slowUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/slow.txt`;
    t = await createTestApp({ env: { FILE_URL_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir } });
    const c = fieldsClient(t);
    ann = await t.user();
    w = await c.world(ann);
    await c.field(ann, w.project, 'Attachments', 'files');
    await c.card(ann, w.root, 'warm-up'); // first request pays for lazy start-up costs
  });
  afterAll(async () => {
    await t.close();
    source.closeAllConnections();
    await new Promise((resolve) => source.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('does not delay another creation in the same project by more than 500 ms', async () => {
    const started = Date.now();
    const slow = t.http
      .post(`${API}/cards/${w.root}/children`)
      .set(as(ann))
      .send({ title: 'with a slow file', attributes: { Attachments: slowUrl } })
      .then((res) => res);
    await slowRequested; // the slow creation is now waiting for the remote server

    const before = Date.now();
    const other = await t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'meanwhile' });
    const otherMs = Date.now() - before;
    expect(other.status).toBe(201);
    expect(otherMs).toBeLessThan(500);

    const done = await slow;
    expect(done.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(SLOW_MS);
    expect(done.body.attributes.Attachments).toEqual([expect.objectContaining({ name: 'slow.txt', size: 5 })]);
    // Refs follow the order the creations took the project's counter: the slow one came last.
    expect(done.body.ref).toBeGreaterThan(other.body.ref);
  });
});
