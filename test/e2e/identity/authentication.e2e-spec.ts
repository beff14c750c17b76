import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { credentialWindowKey } from '../../../src/modules/identity/application/api-keys.service.js';
import { hashLimitKey } from '../../../src/modules/identity/infrastructure/rate-limit.store.js';
import { awayFromWindowEdge } from '../../support/clock-edges.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

describe('authentication and /me', () => {
  let t: TestApp;
  let ann: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user('ann');
  });
  afterAll(() => t.close());

  it('accepts the key as X-Api-Key', async () => {
    const res = await t.http.get('/api/1.0/me').set(as(ann)).expect(200);
    expect(res.body).toMatchObject({ id: ann.id, username: 'ann', email: 'ann@example.test' });
    expect(res.body.created_at).toEqual(expect.any(String));
    expect(res.body).not.toHaveProperty('password_hash');
  });

  it('accepts the key as the Basic username with an empty password', async () => {
    const res = await t.http.get('/api/1.0/me').auth(ann.apiKey, '').expect(200);
    expect(res.body.username).toBe('ann');
  });

  it.each([
    ['no credentials', {}],
    ['an unknown key', { 'X-Api-Key': 'cwk_nope_nope_nope_nope_nope_nope_nope' }],
    ['a key with a password', { Authorization: `Basic ${Buffer.from('cwk_x:secret').toString('base64')}` }],
  ])('refuses %s with 401 problem+json and a Basic challenge', async (_label, headers) => {
    const res = await t.http.get('/api/1.0/me').set(headers as Record<string, string>).expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe('Basic realm="cardwork"');
    expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    expect(res.body.error).toBe(res.body.detail);
  });

  it('refuses a Bearer token it never issued with 401 problem+json and a Bearer challenge (RFC 6750)', async () => {
    const res = await t.http.get('/api/1.0/me').set('Authorization', 'Bearer cwa_never_issued').expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="cardwork", error="invalid_token"');
  });

  it.each([
    ['an unknown key', { 'X-Api-Key': 'cwk_nope_nope_nope_nope_nope_nope_nope' }, 'Invalid or revoked API key'],
    ['an unknown key as the Basic username', { Authorization: `Basic ${Buffer.from('cwk_nope:').toString('base64')}` }, 'Invalid or revoked API key'],
    ['Bearer without a token', { Authorization: 'Bearer ' }, expect.stringMatching(/^Unrecognised credential: send an API key .* or an OAuth access token/)],
    ['a key with a password', { Authorization: `Basic ${Buffer.from('cwk_x:secret').toString('base64')}` }, expect.stringMatching(/^Unrecognised credential/)],
    ['another scheme', { Authorization: 'Token abc' }, expect.stringMatching(/^Unrecognised credential/)],
  ])('names what it refuses: %s', async (_label, headers, detail) => {
    const res = await t.http.get('/api/1.0/me').set(headers as Record<string, string>).expect(401);
    expect(res.body).toMatchObject({ type: 'AUTH.UNAUTHORIZED', detail });
  });

  it('refuses two different credentials in one request', async () => {
    const bob = await t.user();
    await t.http.get('/api/1.0/me').set(as(ann)).auth(bob.apiKey, '').expect(401);
  });

  it('lets a user hold several keys, lists them without the secret, and revokes one', async () => {
    const created = await t.http.post('/api/1.0/me/api-keys').set(as(ann)).send({ name: 'laptop' }).expect(201);
    expect(created.body.api_key).toMatch(/^cwk_/);
    const second = { ...ann, apiKey: created.body.api_key as string };
    await t.http.get('/api/1.0/me').set(as(second)).expect(200);

    const list = await t.http.get('/api/1.0/me/api-keys').set(as(ann)).expect(200);
    expect(list.body.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(list.body)).not.toContain(created.body.api_key);
    const used = list.body.find((k: { id: number }) => k.id === created.body.id);
    expect(used.last_used_at).toEqual(expect.any(String));

    await t.http.delete(`/api/1.0/me/api-keys/${created.body.id}`).set(as(ann)).expect(200);
    await t.http.get('/api/1.0/me').set(as(second)).expect(401);
    await t.http.get('/api/1.0/me').set(as(ann)).expect(200);
  });

  it("cannot revoke another user's key", async () => {
    const bob = await t.user();
    const key = await t.http.post('/api/1.0/me/api-keys').set(as(bob)).send({}).expect(201);
    await t.http.delete(`/api/1.0/me/api-keys/${key.body.id}`).set(as(ann)).expect(404);
    await t.http.get('/api/1.0/me').set({ 'X-Api-Key': key.body.api_key }).expect(200);
  });

  it('sends rate limit headers', async () => {
    const res = await t.http.get('/api/1.0/me').set(as(ann)).expect(200);
    expect(res.headers['ratelimit-limit']).toBeDefined();
    expect(res.headers['ratelimit-remaining']).toBeDefined();
  });
});

describe('rate limiting', () => {
  let t: TestApp;
  afterAll(() => t.close());

  it('answers 429 with Retry-After once a credential exceeds its budget', async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    const u = await t.user();
    await awayFromWindowEdge();
    for (let i = 0; i < 3; i++) await t.http.get('/api/1.0/me').set(as(u)).expect(200);
    const res = await t.http.get('/api/1.0/me').set(as(u)).expect(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body.status).toBe(429);
  });
});

describe('the API key, looked up as the request arrives', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  const remaining = (res: { headers: Record<string, string> }) => Number(res.headers['ratelimit-remaining']);

  it('counts each request once, whatever form the key comes in', async () => {
    const u = await t.user();
    const org = await t.http.post('/api/1.0/organizations').set(as(u)).send({ name: 'T' }).expect(201);
    let last = remaining(await t.http.get('/api/1.0/me').set(as(u)).expect(200));
    const requests = [
      () => t.http.get('/api/1.0/me').set(as(u)),
      () => t.http.get('/api/1.0/me').auth(u.apiKey, ''),
      () => t.http.post(`/api/1.0/organizations/${org.body.id}/projects`).set(as(u)).send({ title: 'P' }),
      () => t.http.post('/api/1.0/organizations').auth(u.apiKey, '').send({ name: 'U' }),
    ];
    for (const send of requests) {
      const res = await send();
      expect(res.status).toBeLessThan(300);
      expect(remaining(res)).toBe(last - 1);
      last = remaining(res);
    }
  });

  it('has looked the key up before the body has come', async () => {
    const u = await t.user();
    await t.http.get('/api/1.0/me').set(as(u)).expect(200);
    const hits = async () => {
      const rows = (await t.app.get(DataSource).query('SELECT hits FROM identity.rate_limit_windows WHERE key = $1', [
        hashLimitKey(credentialWindowKey(u.apiKey)),
      ])) as Array<{ hits: number }>;
      return Number(rows[0].hits);
    };
    const before = await hits();
    // A creation whose body is not sent yet: the server has its head only.
    const socket = net.connect(port, '127.0.0.1');
    const body = JSON.stringify({ name: 'Slow' });
    socket.write(
      `POST /api/1.0/organizations HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${u.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const answer = new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (c: Buffer) => {
        got += c.toString();
        if (got.includes('\r\n\r\n')) resolve(got);
      });
    });
    try {
      // Its hit is counted while the body is still to come.
      let seen = before;
      for (let i = 0; i < 100 && seen === before; i++) {
        await new Promise((r) => setTimeout(r, 20));
        seen = await hits();
      }
      expect(seen).toBe(before + 1);
      socket.write(body);
      expect(await answer).toMatch(/^HTTP\/1\.1 201/);
      expect(await hits()).toBe(before + 1);
    } finally {
      socket.destroy();
    }
  });

  it('answers a malformed body 400, and a revoked key 401, as before', async () => {
    const u = await t.user();
    await t.http.post('/api/1.0/organizations').set(as(u)).set('Content-Type', 'application/json').send('{"name":').expect(400);
    const key = await t.http.post('/api/1.0/me/api-keys').set(as(u)).send({}).expect(201);
    await t.http.delete(`/api/1.0/me/api-keys/${key.body.id}`).set(as(u)).expect(200);
    const revoked = { 'X-Api-Key': key.body.api_key as string };
    await t.http.post('/api/1.0/organizations').set(revoked).set('Content-Type', 'application/json').send('{"name":').expect(400);
    await t.http.post('/api/1.0/organizations').set(revoked).send({ name: 'No' }).expect(401);
    await t.http.post('/api/1.0/organizations').auth(key.body.api_key, '').send({ name: 'No' }).expect(401);
  });
});
