import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { rawExchange } from '../../support/raw-http.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

// Regressions of issue 13: each of these answered wrongly before the fix.
describe('hardening regressions (issue 13)', () => {
  let t: TestApp;
  let u: TestUser;
  let port: number;
  let orgId: number;
  let project: ProjectJson;
  let cardId: number;
  const UPLOAD_CAP = 64 * 1024;

  beforeAll(async () => {
    t = await createTestApp({ env: { MAX_UPLOAD_BYTES: String(UPLOAD_CAP) } });
    const server = t.app.getHttpServer() as http.Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    u = await t.user();
    const ws = workspaceClient(t);
    orgId = await ws.team(u);
    project = await ws.project(u, orgId);
    cardId = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(u)).send({ title: 'c' }).expect(201)).body.id;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(u)).send({ name: 'Docs', type: 'files' }).expect(201);
  });
  afterAll(() => t.close());

  const expectProblem = (res: { status: number; headers: Record<string, string> }, status: number) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  };

  describe('path ids are plain decimal only (DESIGN.md §2)', () => {
    const forms = (id: number) => [
      `0x${id.toString(16)}`,
      `${id}e0`,
      `${id / 10}e1`,
      `%20${id}`,
      `${id}%20`,
      `${id}.0`,
      `+${id}`,
      `0${id}`,
      '0',
      '-1',
      '9007199254740993',
    ];

    it('answers 404 for every other spelling of an existing card, project and team id', async () => {
      const targets = [
        (x: string) => `${API}/cards/${x}`,
        (x: string) => `${API}/projects/${x}`,
        (x: string) => `${API}/organizations/${x}`,
      ];
      const ids = [cardId, project.id, orgId];
      for (const [i, path] of targets.entries()) {
        await t.http.get(path(String(ids[i]))).set(as(u)).expect(200);
        for (const form of forms(ids[i])) expectProblem(await t.http.get(path(form)).set(as(u)), 404);
      }
    });

    it('does not revoke an API key named by a coerced id', async () => {
      const key = (await t.http.post(`${API}/me/api-keys`).set(as(u)).send({ name: 'spare' }).expect(201)).body;
      for (const form of forms(key.id)) expectProblem(await t.http.delete(`${API}/me/api-keys/${form}`).set(as(u)), 404);
      const keys = await t.http.get(`${API}/me/api-keys`).set(as(u)).expect(200);
      expect(keys.body.find((k: { id: number }) => k.id === key.id)).toBeDefined();
    });
  });

  describe('members (DESIGN.md §3)', () => {
    it('answers 409 when the user is already a member, by id or by @username', async () => {
      const bob = await t.user();
      await t.http.post(`${API}/organizations/${orgId}/members`).set(as(u)).send({ user: bob.id, role: 'member' }).expect(201);
      expectProblem(await t.http.post(`${API}/organizations/${orgId}/members`).set(as(u)).send({ user: bob.id }), 409);
      expectProblem(await t.http.post(`${API}/organizations/${orgId}/members`).set(as(u)).send({ user: `@${bob.username}` }), 409);
      expectProblem(await t.http.post(`${API}/organizations/${orgId}/members`).set(as(u)).send({ user: `@${u.username}` }), 409);
    });
  });

  describe('body limits (DESIGN.md §2)', () => {
    const MiB = 1024 * 1024;
    const head = (path: string, type: string, extra: string) =>
      `POST ${API}${path} HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${u.apiKey}\r\nContent-Type: ${type}\r\n${extra}\r\n`;

    it('refuses a JSON body declared over 1 MiB at once, without reading it', async () => {
      const r = await rawExchange(port, head('/organizations', 'application/json', `Content-Length: ${50 * MiB}\r\n`), {
        chunk: Buffer.alloc(64 * 1024, 0x20),
        times: 800,
      });
      expect(r.response?.status).toBe(413);
      expect(r.response?.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(r.bodyBytesWritten).toBeLessThan(10 * MiB);
    });

    it.each([
      ['JSON', 'application/json'],
      ['form', 'application/x-www-form-urlencoded'],
    ])('refuses a chunked %s body as soon as the bytes read pass 1 MiB', async (_label, type) => {
      const data = Buffer.alloc(64 * 1024, 0x61);
      const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
      const r = await rawExchange(port, head('/organizations', type, 'Transfer-Encoding: chunked\r\n'), { chunk, times: 800 });
      expect(r.response?.status).toBe(413);
      expect(JSON.parse(r.response!.body).detail).toMatch(/larger than/);
      expect(r.bodyBytesWritten).toBeLessThan(10 * MiB);
    });

    it('still reads a JSON body just under the limit', async () => {
      const name = 'x'.repeat(1000);
      const padding = 'y'.repeat(MiB - 2000);
      const res = await t.http.post(`${API}/organizations`).set(as(u)).send({ name, padding });
      expectProblem(res, 400);
      expect(res.body.detail).toMatch(/padding/);
    });

    it('answers a multipart upload over the cap with a 413 the client can read (no EPIPE)', async () => {
      const boundary = 'cardworkboundary';
      const file = Buffer.alloc(20 * 1024 * 1024, 0x62);
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="value"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
        file,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      for (const chunked of [false, true]) {
        const res = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
          const req = http.request(
            {
              port,
              host: '127.0.0.1',
              method: 'POST',
              path: `${API}/cards/${cardId}/attributes/Docs/append`,
              headers: {
                'X-Api-Key': u.apiKey,
                'Content-Type': `multipart/form-data; boundary=${boundary}`,
                ...(chunked ? {} : { 'Content-Length': String(body.length) }),
              },
            },
            (response) => {
              let text = '';
              response.on('data', (c) => (text += c));
              response.on('end', () => resolve({ status: response.statusCode!, type: String(response.headers['content-type']), body: text }));
            },
          );
          req.on('error', reject);
          for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.subarray(i, i + 16 * 1024));
          req.end();
        });
        expect(res.status).toBe(413);
        expect(res.type).toMatch(/^application\/problem\+json/);
      }
      const card = await t.http.get(`${API}/cards/${cardId}`).set(as(u)).expect(200);
      expect(card.body.attributes.Docs).toEqual([]);
    });

    it('answers headers over 16 KiB with a 431 problem+json', async () => {
      const r = await rawExchange(port, `GET ${API}/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
      expect(r.response?.status).toBe(431);
      expect(r.response?.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(r.response!.body)).toMatchObject({ status: 431, detail: expect.stringMatching(/16 KiB/) });
    });

    it('answers JSON nested deeper than 64 levels with a 400 that says so', async () => {
      const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
      const res = await t.http
        .post(`${API}/organizations`)
        .set(as(u))
        .set('Content-Type', 'application/json')
        .send(`{"name":"n","x":${deep(100)}}`);
      expectProblem(res, 400);
      expect(res.body.detail).toMatch(/nested deeper than 64 levels/);
      const veryDeep = await t.http.post(`${API}/organizations`).set(as(u)).set('Content-Type', 'application/json').send(deep(200_000));
      expectProblem(veryDeep, 400);
      expect(veryDeep.body.detail).toMatch(/nested deeper than 64 levels/);
      // 64 levels in all (the object itself counts) is still fine for the parser: the DTO decides.
      const ok = await t.http.post(`${API}/organizations`).set(as(u)).set('Content-Type', 'application/json').send(`{"name":"n","x":${deep(63)}}`);
      expect(ok.body.detail).not.toMatch(/nested/);
    });
  });
});
