import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { refuseSlowBodies } from '../../../src/shared/http/slow-bodies.js';
import type { UploadMemoryBudget } from '../../../src/shared/upload-memory.js';
import { answerOf, holdUpload, listeningApp, multipartBody, storedFileCount, until, type Answer } from '../../support/held-uploads.js';
import type { TestApp, TestUser } from '../../support/test-app.js';
import { API, fieldsClient, type World } from '../fields/fields-fixtures.js';

/**
 * A body sent in `chunkBytes` pieces, one every `everyMs`, until all is sent
 * or the server answers; the answer, with status 0 if the socket died first.
 */
function pacedBody(port: number, path: string, headers: Record<string, string>, upload: { type: string; body: Buffer }, chunkBytes: number, everyMs: number): Promise<Answer> {
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path,
    agent: false,
    headers: { ...headers, 'Content-Type': upload.type, 'Content-Length': String(upload.body.length) },
  });
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    if (req.destroyed) return;
    req.write(upload.body.subarray(sent, sent + chunkBytes));
    sent += chunkBytes;
    if (sent >= upload.body.length) return void req.end();
    timer = setTimeout(next, everyMs);
  };
  next();
  return answerOf(req).finally(() => clearTimeout(timer));
}

function expectTooSlow(answer: Answer): void {
  expect(answer.status).toBe(408);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers.connection).toBe('close');
  expect(answer.body).toMatchObject({ type: 'HTTP.408', status: 408, detail: expect.stringContaining('REQUEST_BODY_TIMEOUT_MS') });
}

/**
 * A request body that stops arriving, or trickles in, is a 408 once it has
 * used its time (REQUEST_BODY_TIMEOUT_MS, and a second more for every
 * REQUEST_BODY_MIN_BYTES_PER_SECOND bytes received), and gives back the
 * upload memory it held: before, such a body held its bytes for Node's five
 * minutes, and a few hundred such clients, signed in or not, kept every
 * other upload and JSON body out with 503s.
 */
describe('slow request bodies', () => {
  const TIMEOUT_MS = 600;
  const MIN_RATE = 2000;
  let t: TestApp;
  let c: ReturnType<typeof fieldsClient>;
  let ann: TestUser;
  let w: World;
  let port: number;
  let dataDir: string;
  let budget: UploadMemoryBudget;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const env = { REQUEST_BODY_TIMEOUT_MS: String(TIMEOUT_MS), REQUEST_BODY_MIN_BYTES_PER_SECOND: String(MIN_RATE) };
    ({ t, port, dataDir, budget, close } = await listeningApp('cardwork-slow-bodies-', env));
    c = fieldsClient(t);
    ann = await t.user();
    w = await c.world(ann);
    await c.field(ann, w.project, 'Note', 'text');
    await c.field(ann, w.project, 'Attachments', 'files');
  });
  afterAll(() => close());

  const key = () => ({ 'X-Api-Key': ann.apiKey });
  const note = (value: string, bytes: number) => {
    const text = JSON.stringify({ value });
    return { type: 'application/json', body: Buffer.from(text + ' '.repeat(bytes - text.length)) };
  };
  const backToZero = () => until(() => budget.inUse === 0, 'the upload memory budget to be back to zero');

  it('answers 408 to a JSON body that stops, signed in or not, and gives its memory back; nothing is written', async () => {
    const card = await c.card(ann, w.root, 'stopped');
    for (const headers of [key(), {}]) {
      const started = Date.now();
      const stopped = holdUpload(port, `${API}/cards/${card.id}/attributes/Note`, headers, note('never', 40_000), { firstBytes: 100 });
      await until(() => budget.inUse === 40_000, 'the body to hold its declared bytes');
      expectTooSlow(await stopped.answer);
      expect(Date.now() - started).toBeLessThan(5_000);
      await backToZero();
    }
    expect((await c.get(ann, card.id)).attributes.Note).toBeNull();
  });

  it('answers 408 to an upload that stops half way, stores nothing and gives its memory back', async () => {
    const card = await c.card(ann, w.root, 'upload stopped');
    const stored = storedFileCount(dataDir);
    const upload = multipartBody('value', 'half.bin', Buffer.alloc(50_000, 7));
    const stopped = holdUpload(port, `${API}/cards/${card.id}/attributes/Attachments/append`, key(), upload);
    expectTooSlow(await stopped.answer);
    await backToZero();
    expect(storedFileCount(dataDir)).toBe(stored);
    expect((await c.get(ann, card.id)).attributes.Attachments).toEqual([]);
  });

  it("answers a web page's form and an OAuth endpoint's in their own forms: the HTML error page, RFC 6749 JSON", async () => {
    const form = { type: 'application/x-www-form-urlencoded', body: Buffer.from(`login=ann&password=${'x'.repeat(4_000)}`) };
    const page = await holdUpload(port, '/login', {}, form, { firstBytes: 100 }).answer;
    expect(page.status).toBe(408);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toMatch(/<h1>Request Timeout<\/h1>.*REQUEST_BODY_TIMEOUT_MS/);
    const token = await holdUpload(port, '/oauth/token', {}, form, { firstBytes: 100 }).answer;
    expect(token.status).toBe(408);
    expect(token.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('REQUEST_BODY_TIMEOUT_MS') });
    await backToZero();
  });

  it('answers 408 to a body that trickles slower than the pace, however long it keeps sending', async () => {
    const card = await c.card(ann, w.root, 'trickle');
    // 20 bytes every 100 ms: 200 bytes a second, a tenth of the pace.
    expectTooSlow(await pacedBody(port, `${API}/cards/${card.id}/attributes/Note`, key(), note('trickled', 4_000), 20, 100));
    await backToZero();
    expect((await c.get(ann, card.id)).attributes.Note).toBeNull();
  });

  it('lets a body that keeps the pace take longer than the timeout', async () => {
    const card = await c.card(ann, w.root, 'steady');
    // 500 bytes every 100 ms: 5 000 bytes a second, for about 2 s (over three times the timeout).
    const started = Date.now();
    const answer = await pacedBody(port, `${API}/cards/${card.id}/attributes/Note`, key(), note('steady', 10_000), 500, 100);
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThan(3 * TIMEOUT_MS);
    expect((await c.get(ann, card.id)).attributes.Note).toBe('steady');
  });
});

/**
 * Only the time the server spends reading counts against the client: a body
 * sent at once but read late (a route still checking the credential, or busy)
 * is not the client's delay. On an Express app of its own, so the route can
 * wait before it reads.
 */
describe('slow request bodies: time the server does not read', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const app = express();
    app.use(refuseSlowBodies({ timeoutMs: 300, minBytesPerSecond: 1000 }));
    app.post('/late', (req, res) => {
      setTimeout(() => {
        let bytes = 0;
        req.on('data', (chunk: Buffer) => (bytes += chunk.length));
        req.on('end', () => res.json({ bytes }));
      }, 1500);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('reads a body that came at once, five times the timeout after it came', async () => {
    const body = { type: 'application/octet-stream', body: Buffer.alloc(200_000, 1) };
    const answer = await pacedBody(port, '/late', {}, body, body.body.length, 0);
    expect(answer).toMatchObject({ status: 200, body: { bytes: 200_000 } });
  });
});
