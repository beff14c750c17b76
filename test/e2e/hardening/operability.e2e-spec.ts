import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { pino } from 'pino';
import { FileStorage } from '../../../src/modules/fields/files/infrastructure/file-storage.js';
import { UsersService } from '../../../src/modules/identity/application/users.service.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { rawExchange } from '../../support/raw-http.js';
import { API } from '../../support/workspace-client.js';

// Structured request logs with a request id, and Prometheus metrics (issue 13).
describe('request logs and metrics', () => {
  let t: TestApp;
  let u: TestUser;
  const lines: Array<Record<string, unknown>> = [];
  const metrics = new Metrics();
  let metricsServer: http.Server;
  let failingUser = -1;
  let slowFileEnd = false;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    t = await createTestApp({
      observe: { rootLogger: pino({ level: 'info' }, sink), metrics },
      // Fault injection: reading one user fails with an unexpected error, to see a 500 logged.
      override: (app) => {
        const users = app.get(UsersService);
        const real = users.get.bind(users);
        jest.spyOn(users, 'get').mockImplementation((id: number) => (id === failingUser ? Promise.reject(new Error('injected failure')) : real(id)));
        // A disk that says a file ended only a while after its last bytes (a read on a busy thread pool).
        const storage = app.get(FileStorage);
        const open = storage.openStream.bind(storage);
        jest.spyOn(storage, 'openStream').mockImplementation(async (key: string) => {
          const opened = await open(key);
          if (!opened || !slowFileEnd) return opened;
          const bytes = opened.stream;
          const slowly = async function* () {
            yield* bytes;
            await new Promise((r) => setTimeout(r, 100));
          };
          return { size: opened.size, stream: Readable.from(slowly()) };
        });
      },
    });
    u = await t.user();
    metricsServer = await metrics.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    metricsServer?.close();
    await t.close();
  });

  it('gives every request an id, echoed as X-Request-Id and written on its JSON log line', async () => {
    const own = await t.http.get(`${API}/me`).set(as(u)).set('X-Request-Id', 'trace-abc.123').expect(200);
    expect(own.headers['x-request-id']).toBe('trace-abc.123');
    const fresh = await t.http.get(`${API}/me`).set(as(u)).expect(200);
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await t.http.get(`${API}/me`).set(as(u)).set('X-Request-Id', 'a b\u00e9').expect(200);
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const line = lines.find((l) => (l.req as { id?: string } | undefined)?.id === 'trace-abc.123');
    expect(line).toMatchObject({ level: 30, req: { method: 'GET', url: `${API}/me` }, res: { statusCode: 200 } });
    expect(typeof line!.responseTime).toBe('number');
    // No credential is ever written.
    expect(JSON.stringify(lines)).not.toContain(u.apiKey);
  });

  it('writes a credential sent in a query string as [redacted], and the client address Express derives (trust proxy)', async () => {
    const secrets = ['cws_SeCrEt', 'cwr_ReFrEsH', 'hunter2-pass', 'abc-code-1'];
    const sent = [
      (await t.http.post(`/oauth/token?client_secret=${secrets[0]}&refresh_token=${secrets[1]}`)).headers['x-request-id'],
      (await t.http.get(`${API}/me?api_key=${u.apiKey}&page=2`)).headers['x-request-id'],
      (await t.http.post(`/login?Password=${secrets[2]}`)).headers['x-request-id'],
      (await t.http.get(`/oauth/authorize?code=${secrets[3]}`)).headers['x-request-id'],
    ];
    await new Promise((r) => setTimeout(r, 50));
    const logged = sent.map((id) => lines.find((l) => (l.req as { id?: string } | undefined)?.id === id));
    expect(logged.map((l) => (l?.req as { url?: string } | undefined)?.url)).toEqual([
      '/oauth/token?client_secret=[redacted]&refresh_token=[redacted]',
      `${API}/me?api_key=[redacted]&page=2`,
      '/login?Password=[redacted]',
      '/oauth/authorize?code=[redacted]',
    ]);
    const text = JSON.stringify(lines);
    for (const secret of [...secrets, u.apiKey]) expect(text).not.toContain(secret);

    // Tests connect from loopback, which `trust proxy` trusts by default: the address is the proxy's client.
    const proxied = await t.http.get(`${API}/me`).set(as(u)).set('X-Forwarded-For', '203.0.113.7').expect(200);
    await new Promise((r) => setTimeout(r, 50));
    const line = lines.find((l) => (l.req as { id?: string } | undefined)?.id === proxied.headers['x-request-id']);
    expect(line).toMatchObject({ req: { remoteAddress: '203.0.113.7' } });
  });

  it('logs a 5xx at error level with its stack next to the request id, and keeps the stack out of the body', async () => {
    const victim = await t.user();
    failingUser = victim.id;
    const res = await t.http.get(`${API}/me`).set(as(victim)).expect(500);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.text).not.toContain('injected failure');
    const id = res.headers['x-request-id'];
    const line = lines.find((l) => (l.req as { id?: string } | undefined)?.id === id);
    expect(line).toMatchObject({ level: 50, res: { statusCode: 500 }, err: { message: 'injected failure' } });
    expect((line!.err as { stack: string }).stack).toMatch(/injected failure\n\s+at /);
  });

  it('logs a file download whose client closes right after its last byte as completed, and one cut short as closed early', async () => {
    const team = (await t.http.post(`${API}/organizations`).set(as(u)).send({ name: 'Files' }).expect(201)).body.id;
    const project = (await t.http.post(`${API}/organizations/${team}/projects`).set(as(u)).send({ title: 'Files' }).expect(201)).body;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(u)).send({ name: 'Docs', type: 'files' }).expect(201);
    const card = project.top_level_card_id;
    const stored = async (attach: (r: ReturnType<typeof t.http.post>) => ReturnType<typeof t.http.post>) =>
      ((await attach(t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(u))).expect(200)).body.attributes.Docs as Array<{ id: number }>).at(-1)!.id;
    const small = await stored((r) => r.send({ value: { name: 'notes.txt', data: 'hello' } }));
    const large = await stored((r) => r.attach('value', Buffer.alloc(8 << 20, 1), 'large.bin'));
    const server = t.app.getHttpServer() as http.Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const head = (id: number, requestId: string) => `GET ${API}/files/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${u.apiKey}\r\nX-Request-Id: ${requestId}\r\n\r\n`;
    const logged = (requestId: string) => lines.find((l) => (l.req as { id?: string } | undefined)?.id === requestId);
    try {
      // The client has every byte Content-Length declared and closes at once, as curl does, while the
      // disk has yet to say the file ended (another read, here 100 ms): the answer was complete.
      slowFileEnd = true;
      const ids = ['download-1', 'download-2', 'download-3'];
      for (const id of ids) expect((await rawExchange(port, head(small, id))).response).toMatchObject({ status: 200, body: 'hello' });
      // The client leaves after the first bytes of 8 MiB: cut short.
      await new Promise<void>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(head(large, 'download-cut')));
        socket.once('data', () => socket.destroy());
        socket.once('close', () => resolve());
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(ids.map((id) => [id, logged(id)?.msg])).toEqual(ids.map((id) => [id, 'request completed']));
      expect(logged('download-cut')).toMatchObject({ level: 40, msg: 'request closed before its answer was complete', res: { statusCode: 200 } });
    } finally {
      slowFileEnd = false;
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves request counts and latency by route and status, pool use and event-loop lag on /metrics', async () => {
    await t.http.get(`${API}/me`).set(as(u)).expect(200);
    await t.http.get(`${API}/organizations/999999`).set(as(u)).expect(404);
    const port = (metricsServer.address() as AddressInfo).port;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/cardwork_http_requests_total\{method="GET",route="\/api\/1\.0\/me",status="200"\} [1-9]/);
    expect(text).toMatch(/cardwork_http_requests_total\{method="GET",route="\/api\/1\.0\/organizations\/:id",status="404"\} 1/);
    expect(text).toMatch(/cardwork_http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/api\/1\.0\/me",status="200"\}/);
    expect(text).toMatch(/cardwork_nodejs_eventloop_lag_seconds \d/);
    if (process.env.DATABASE_URL) expect(text).toMatch(/cardwork_db_pool_connections [1-9]/);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  });
});
