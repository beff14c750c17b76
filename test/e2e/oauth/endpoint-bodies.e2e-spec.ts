import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { rawExchange, type RawResponse } from '../../support/raw-http.js';
import { tokenRequest, webUser, type RegisteredApp } from '../../support/oauth-client.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const CALLBACK = 'https://app.example.test/callback';
const MiB = 1024 * 1024;
const ENDPOINTS = ['/oauth/token', '/oauth/revoke'];
/** RFC 6749 §5.2: error_description is printable ASCII without `"` and `\`. */
const DESCRIPTION = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

// OAuth clients parse RFC 6749 error JSON from the token and revocation
// endpoints, so a body refused before any OAuth code runs is answered in that
// form too (the app-wide parsers answered problem+json); the API keeps it.
describe('OAuth token and revocation endpoints: refusals of the body', () => {
  let t: TestApp;
  let port: number;
  let app: RegisteredApp;
  let keyHolder: TestUser;

  const post = (path: string, type: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    t.http.post(path).auth(app.clientId, app.clientSecret!).set({ 'Content-Type': type, ...headers }).send(body);
  const newPair = async () => {
    const ann = webUser(t);
    await ann.signUp(`ann${Math.random().toString(36).slice(2, 8)}`);
    const clientApp = await ann.registerApp([CALLBACK]);
    const code = await ann.code({ response_type: 'code', client_id: clientApp.clientId, redirect_uri: CALLBACK, scope: 'read_user' });
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, { id: clientApp.clientId, secret: clientApp.clientSecret! }).expect(200);
    return { app: clientApp, accessToken: res.body.access_token as string, refreshToken: res.body.refresh_token as string };
  };
  const works = (accessToken: string) => t.http.get('/api/1.0/me').set('Authorization', `Bearer ${accessToken}`);

  function expectRefusal(res: Response | RawResponse, status: number): void {
    const body = 'text' in res ? JSON.parse(res.text) : JSON.parse(res.body);
    expect({ status: res.status, type: res.headers['content-type'], body }).toEqual({
      status,
      type: expect.stringMatching(/^application\/json/),
      body: { error: 'invalid_request', error_description: expect.stringMatching(DESCRIPTION) },
    });
    expect(res.headers['cache-control']).toBe('no-store');
  }

  beforeAll(async () => {
    t = await createTestApp();
    const server = t.app.getHttpServer() as http.Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    ({ app } = await newPair());
    keyHolder = await t.user();
  });
  afterAll(() => t.close());

  describe.each(ENDPOINTS)('%s', (path) => {
    it.each([
      ['malformed JSON', 'application/json', '{"grant_type":'],
      ['malformed JSON of a +json type', 'application/problem+json', '{"token": "x",'],
      ['JSON nested deeper than 64 levels', 'application/json', `{"token":${'['.repeat(70)}${']'.repeat(70)}}`],
      ['well-formed JSON', 'application/json', '{"grant_type":"refresh_token","refresh_token":"cwr_x","token":"cwr_x"}'],
      ['multipart', 'multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="token"\r\n\r\nx\r\n--b--\r\n'],
      ['text', 'text/plain', 'token=x'],
    ])('answers a body that is not a form (%s) with 400 invalid_request, unread', async (_label, type, body) => {
      const res = await post(path, type, body);
      expectRefusal(res, 400);
      expect(res.body.error_description).toBe('Invalid request: content must be application/x-www-form-urlencoded');
    });

    // Both take POST only: another method was a 404 problem+json, as for a path nobody serves.
    it.each(['get', 'put', 'delete', 'patch', 'options'] as const)('answers %s with 405, Allow: POST, in RFC 6749 JSON', async (method) => {
      for (const url of [path, `${path}/`, `${path}?grant_type=refresh_token`, path.toUpperCase()]) {
        const res = await t.http[method](url).set('Content-Type', 'application/json').send('{"token":');
        expectRefusal(res, 405);
        expect(res.headers.allow).toBe('POST');
        expect(res.body.error_description).toBe('Invalid request: method must be POST');
      }
      const head = await t.http.head(path);
      expect({ status: head.status, allow: head.headers.allow }).toEqual({ status: 405, allow: 'POST' });
      // A path below the endpoint is no endpoint.
      expect((await t.http[method](`${path}/x`)).status).toBe(404);
    });

    it('answers a body without a Content-Type with 400 invalid_request', async () => {
      const r = await rawExchange(port, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 7\r\n\r\ntoken=x`);
      expectRefusal(r.response!, 400);
    });

    it.each([
      ['an unsupported charset', { 'Content-Type': 'application/x-www-form-urlencoded; charset=koi8-r' }, 'token=x'],
      ['an unknown Content-Encoding', { 'Content-Encoding': 'x-unknown' }, 'token=x'],
      ['a corrupt gzip body', { 'Content-Encoding': 'gzip' }, 'not gzip at all'],
    ])('answers a form with %s with 400 invalid_request', async (_label, headers, body) => {
      expectRefusal(await post(path, 'application/x-www-form-urlencoded', body, headers), 400);
    });

    // Read as the literal text "%FF", such a value was answered invalid_grant or invalid_client.
    it.each([
      ['an escape that is not UTF-8', Buffer.from('grant_type=refresh_token&refresh_token=%FF&token=%ED%A0%80')],
      ['bytes that are not UTF-8', Buffer.concat([Buffer.from('grant_type=refresh_token&refresh_token='), Buffer.from([0xff]), Buffer.from('&token=x')])],
    ])('answers a form with %s with 400 invalid_request', async (_label, body) => {
      // Sent raw: supertest would serialise a Buffer as a form of its indexes.
      const basic = Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64');
      const head =
        `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic ${basic}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`;
      const res = (await rawExchange(port, head, { chunk: body, times: 1 })).response!;
      expectRefusal(res, 400);
      expect(JSON.parse(res.body).error_description).toBe('Invalid request: the form must be valid UTF-8');
    });

    it('answers a form with too many parameters with 413 invalid_request', async () => {
      const fields = Array.from({ length: 1100 }, (_, i) => `f${i}=1`).join('&');
      expectRefusal(await post(path, 'application/x-www-form-urlencoded', fields), 413);
    });

    it('answers a form over 1 MiB with 413 invalid_request', async () => {
      expectRefusal(await post(path, 'application/x-www-form-urlencoded', `token=${'a'.repeat(MiB)}`), 413);
    });

    it('refuses a form declared over 1 MiB at once, without reading it, with 413 invalid_request', async () => {
      const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${50 * MiB}\r\n\r\n`;
      const r = await rawExchange(port, head, { chunk: Buffer.alloc(64 * 1024, 0x61), times: 800 });
      expectRefusal(r.response!, 413);
      expect(r.bodyBytesWritten).toBeLessThan(10 * MiB);
    });

    it('answers a form that decompresses to over 1 MiB with 413 invalid_request', async () => {
      const form = zlib.gzipSync(`token=${'a'.repeat(2 * MiB)}`);
      const head =
        `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Encoding: gzip\r\nContent-Length: ${form.length}\r\n\r\n`;
      expectRefusal((await rawExchange(port, head, { chunk: form, times: 1 })).response!, 413);
    });

    it.each([
      ['form', 'application/x-www-form-urlencoded', 413],
      ['JSON', 'application/json', 400],
    ])('refuses a chunked %s body before it passes 1 MiB', async (_label, type, status) => {
      const data = Buffer.alloc(64 * 1024, 0x61);
      const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
      const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n`;
      const r = await rawExchange(port, head, { chunk, times: 800 });
      expectRefusal(r.response!, status);
      expect(r.bodyBytesWritten).toBeLessThan(10 * MiB);
    });
  });

  it('revokes nothing for a revocation sent as JSON, and still reads a form, gzip-compressed too', async () => {
    const pair = await newPair();
    const credentials = Buffer.from(`${pair.app.clientId}:${pair.app.clientSecret}`).toString('base64');
    const json = JSON.stringify({ token: pair.refreshToken });
    expectRefusal(await t.http.post('/oauth/revoke').set({ Authorization: `Basic ${credentials}`, 'Content-Type': 'application/json' }).send(json), 400);
    await works(pair.accessToken).expect(200);
    // Raw: supertest does not send a compressed body as it is.
    const form = zlib.gzipSync(`token=${pair.refreshToken}`);
    const head =
      `POST /oauth/revoke HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic ${credentials}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Encoding: gzip\r\nContent-Length: ${form.length}\r\n\r\n`;
    expect((await rawExchange(port, head, { chunk: form, times: 1 })).response?.status).toBe(200);
    await works(pair.accessToken).expect(401);
  });

  it('still reads a form-encoded token request', async () => {
    const pair = await newPair();
    const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: pair.refreshToken }, { id: pair.app.clientId, secret: pair.app.clientSecret! }).expect(200);
    await works(res.body.access_token).expect(200);
  });

  it('leaves the API answering problem+json for the same bodies', async () => {
    const api = (type: string, body: string) => t.http.post('/api/1.0/organizations').set(as(keyHolder)).set('Content-Type', type).send(body);
    const cases: Array<[string, string, number]> = [
      ['application/json', '{"name":', 400],
      ['application/json', `{"name":${'['.repeat(70)}${']'.repeat(70)}}`, 400],
      ['text/plain', 'name=x', 415],
      ['application/x-www-form-urlencoded', `name=${'a'.repeat(MiB)}`, 413],
    ];
    for (const [type, body, status] of cases) {
      const res = await api(type, body);
      expect({ type, status: res.status, contentType: res.headers['content-type'] }).toEqual({
        type,
        status,
        contentType: expect.stringMatching(/^application\/problem\+json/),
      });
    }
  });
});
