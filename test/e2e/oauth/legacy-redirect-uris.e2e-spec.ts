import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const API = '/api/1.0';

/**
 * Redirect URIs stored before registrations had to be written as they parse
 * (4efda0e), as such a registration left them: the page refuses them now, so
 * they are written into the table directly. A client whose library sends
 * the parsed form never matched them.
 */
const LEGACY = ['HTTPS://App.Example.test:443/cb', 'https://app.example.test', 'https://app.example.test/a/../back', 'HTTP://Evil.example.test/cb'];

describe('redirect URIs registered before the canonical-form rule', () => {
  let t: TestApp;
  let ann: WebUser;
  let app: RegisteredApp;

  const params = (redirectUri: string) => ({ response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri, scope: 'read_user', state: 's' });
  const exchange = (code: string, redirectUri: string) =>
    tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: redirectUri }, { id: app.clientId, secret: app.clientSecret! });

  beforeAll(async () => {
    t = await createTestApp();
    ann = webUser(t);
    await ann.signUp('ann');
    app = await ann.registerApp(['https://placeholder.example.test/cb']);
    await t.app.get(DataSource).query(`UPDATE identity.oauth_clients SET redirect_uris = $1 WHERE client_id = $2`, [LEGACY.join('\n'), app.clientId]);
  });
  afterAll(() => t.close());

  it.each([
    ['HTTPS://App.Example.test:443/cb', 'https://app.example.test/cb'],
    ['https://app.example.test', 'https://app.example.test/'],
    ['https://app.example.test/a/../back', 'https://app.example.test/back'],
  ])('%s matches its canonical form %s: the code flow runs through to the API', async (_stored, canonical) => {
    const back = await ann.decide(params(canonical));
    expect(`${back.origin}${back.pathname}`).toBe(canonical);
    expect(back.searchParams.get('state')).toBe('s');
    const code = back.searchParams.get('code')!;
    // The exchange names the redirect URI the authorization request named, as RFC 6749 §4.1.3 asks.
    const pair = (await exchange(code, canonical).expect(200)).body as { access_token: string };
    await t.http.get(`${API}/me`).set('Authorization', `Bearer ${pair.access_token}`).expect(200);
  });

  it('a denial goes back to the canonical form too', async () => {
    const back = await ann.decide(params('https://app.example.test/cb'), 'deny');
    expect(back.href).toMatch(/^https:\/\/app\.example\.test\/cb\?error=access_denied&/);
  });

  it('the stored text still matches as it did, for a client that sends it', async () => {
    const back = await ann.decide(params('HTTPS://App.Example.test:443/cb'));
    expect(back.hostname).toBe('app.example.test');
    expect((await exchange(back.searchParams.get('code')!, 'HTTPS://App.Example.test:443/cb')).status).toBe(200);
  });

  it('the exchange must name the same form the authorization request did; the code stays usable', async () => {
    const code = (await ann.decide(params('https://app.example.test/cb'))).searchParams.get('code')!;
    const refused = await exchange(code, 'HTTPS://App.Example.test:443/cb').expect(400);
    expect(refused.body.error).toBe('invalid_request');
    await exchange(code, 'https://app.example.test/cb').expect(200);
  });

  // Exact still: no prefix, no other spelling of the same place, no stored URI
  // whose parsed form could not be registered today (http off loopback).
  it.each([
    'https://app.example.test/cb/',
    'https://app.example.test/cb/extra',
    'https://app.example.test/c',
    'https://app.example.test/cb?x=1',
    'https://app.example.test/cb#x',
    'https://app.example.test:443/cb',
    'HTTPS://APP.EXAMPLE.TEST/cb',
    'https://app.example.test/a/../cb',
    'https://app.example.test/a/../back/',
    'https://app.example.test.evil.test/cb',
    'http://evil.example.test/cb',
    'https://placeholder.example.test/cb',
  ])('%s is an error page, never a redirect', async (redirectUri) => {
    const res = await ann.authorize(params(redirectUri)).expect(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('The redirect_uri is not one the application registered');
  });
});
