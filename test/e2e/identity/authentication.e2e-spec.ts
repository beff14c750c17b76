import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
    for (let i = 0; i < 3; i++) await t.http.get('/api/1.0/me').set(as(u)).expect(200);
    const res = await t.http.get('/api/1.0/me').set(as(u)).expect(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body.status).toBe(429);
  });
});
