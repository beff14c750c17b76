import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { rawExchange } from '../../support/raw-http.js';
import { colonlessBasic, listen, send } from './raw-client.js';

/** Issue 14.1: `Authorization: Basic base64("<key>")`, as the original's clients send it. */
describe('compatibility: a Basic credential without a colon is the key', () => {
  let t: TestApp;
  let api: string;
  let ann: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    api = `${await listen(t)}/api/1.0`;
    ann = await t.user('ann_compat');
    bob = await t.user('bob_compat');
  });
  afterAll(() => t.close());

  it('authenticates the key alone, for reads and writes', async () => {
    const me = await send(`${api}/me`, 'GET', { Authorization: colonlessBasic(ann.apiKey) });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: ann.id, username: 'ann_compat' });
    const team = await send(`${api}/organizations`, 'POST', { Authorization: colonlessBasic(ann.apiKey) }, { name: 'Moved over' });
    expect(team.status).toBe(201);
    expect(team.body).toMatchObject({ name: 'Moved over', role: 'admin' });
  });

  it('still accepts the key with an empty password', async () => {
    const res = await send(`${api}/me`, 'GET', { Authorization: `Basic ${Buffer.from(`${bob.apiKey}:`).toString('base64')}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: bob.id });
  });

  it.each([
    ['an unknown key', () => colonlessBasic('cwk_not_a_key_we_issued_0000000000')],
    ['a key one character short', () => colonlessBasic(ann.apiKey.slice(0, -1))],
    ['an empty value', () => 'Basic '],
  ])('refuses %s with 401 problem+json and the Basic challenge', async (_label, authorization) => {
    const res = await send(`${api}/me`, 'GET', { Authorization: authorization() });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="cardwork"');
    expect(res.body).toMatchObject({ status: 401 });
  });

  it('refuses two different credentials in one request, whichever is valid', async () => {
    const both = await send(`${api}/me`, 'GET', { Authorization: colonlessBasic(ann.apiKey), 'X-Api-Key': bob.apiKey });
    expect(both.status).toBe(401);
    const oneBad = await send(`${api}/me`, 'GET', { Authorization: colonlessBasic('cwk_wrong'), 'X-Api-Key': ann.apiKey });
    expect(oneBad.status).toBe(401);
  });

  it('takes the same key sent twice as one credential', async () => {
    const res = await send(`${api}/me`, 'GET', { Authorization: colonlessBasic(ann.apiKey), 'X-Api-Key': ann.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ann.id });
  });

  // Node keeps only the first of several Authorization headers and joins several X-Api-Key headers
  // into "a, b": the credentials are read from the headers as sent (a raw socket sends them so).
  it.each([
    ['the same key in two Authorization headers', 200, () => [`Authorization: ${colonlessBasic(ann.apiKey)}`, `Authorization: ${colonlessBasic(ann.apiKey)}`]],
    ['the same key in two X-Api-Key headers', 200, () => [`X-Api-Key: ${ann.apiKey}`, `X-Api-Key: ${ann.apiKey}`]],
    ['the same key twice in one X-Api-Key header, as a proxy joins them', 200, () => [`X-Api-Key: ${ann.apiKey}, ${ann.apiKey}`]],
    ['two keys in two Authorization headers', 401, () => [`Authorization: ${colonlessBasic(ann.apiKey)}`, `Authorization: ${colonlessBasic(bob.apiKey)}`]],
    ['a key and a token in two Authorization headers', 401, () => [`Authorization: ${colonlessBasic(ann.apiKey)}`, 'Authorization: Bearer cwo_x']],
    ['two keys in two X-Api-Key headers', 401, () => [`X-Api-Key: ${ann.apiKey}`, `X-Api-Key: ${bob.apiKey}`]],
  ])('reads repeated credential headers as sent: %s → %i', async (_label, status, lines) => {
    const port = Number(new URL(api).port);
    const { response } = await rawExchange(port, `GET /api/1.0/me HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines().join('\r\n')}\r\nConnection: close\r\n\r\n`);
    expect(response?.status).toBe(status);
    if (status === 200) expect(JSON.parse(response!.body).id).toBe(ann.id);
  });
});
