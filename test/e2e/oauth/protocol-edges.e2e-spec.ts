import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { csrfOf, pkce, tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CALLBACK = 'https://app.example.test/callback';
const API = '/api/1.0';

interface TokenPair {
  access_token: string;
  refresh_token: string;
  scope: string;
}

/** A form body as sent, so that a parameter may appear more than once (an object cannot say that). */
const form = (pairs: [string, string][]) => new URLSearchParams(pairs).toString();

// Edges of RFC 6749 / RFC 7009 an audit found answered wrongly: repeated
// parameters (a 500), a refresh storing a repeated scope, an empty state
// refused, revocation without client authentication answered unlike the
// token endpoint, rotating a public application's (absent) secret, and
// redirect URIs that parse to another URI than the one registered.
describe('OAuth protocol edges', () => {
  let t: TestApp;
  let ann: WebUser;
  let app: RegisteredApp;

  const basic = () => ({ id: app.clientId, secret: app.clientSecret! });
  const params = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: CALLBACK,
    scope: 'read_user read_workspace',
    ...extra,
  });
  const exchange = (code: string) => tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, basic());
  const refresh = (refreshToken: string, scope?: string) =>
    tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope === undefined ? {} : { scope }) }, basic());
  const me = (accessToken: string) => t.http.get(`${API}/me`).set('Authorization', `Bearer ${accessToken}`);
  const firstPair = async () => (await exchange(await ann.code(params())).expect(200)).body as TokenPair;
  const post = (path: string, body: string, withBasic = true) => {
    const req = t.http.post(path).type('form');
    if (withBasic) req.auth(app.clientId, app.clientSecret!);
    return req.send(body);
  };
  const expectRepeated = (res: { status: number; body: Record<string, unknown>; headers: Record<string, string> }, name: string) => {
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ error: 'invalid_request', error_description: `Invalid parameter: \`${name}\` is sent more than once (RFC 6749 section 3.1)` });
  };

  beforeAll(async () => {
    t = await createTestApp();
    ann = webUser(t);
    await ann.signUp('ann');
    app = await ann.registerApp([CALLBACK]);
  });
  afterAll(() => t.close());

  describe('a parameter sent more than once (RFC 6749 §3.1) is invalid_request and changes nothing', () => {
    it.each([
      ['code', (code: string) => [['grant_type', 'authorization_code'], ['code', code], ['code', code], ['redirect_uri', CALLBACK]]],
      ['code', (code: string) => [['grant_type', 'authorization_code'], ['code', 'cwz_a'], ['code', code], ['redirect_uri', CALLBACK]]],
      ['redirect_uri', (code: string) => [['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', CALLBACK], ['redirect_uri', CALLBACK]]],
      ['grant_type', (code: string) => [['grant_type', 'authorization_code'], ['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', CALLBACK]]],
      ['code_verifier', (code: string) => [['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', CALLBACK], ['code_verifier', 'a'.repeat(43)], ['code_verifier', 'b'.repeat(43)]]],
    ] as [string, (code: string) => [string, string][]][])('a code exchange repeating %s; the code still exchanges once', async (name, body) => {
      const code = await ann.code(params());
      expectRepeated(await post('/oauth/token', form(body(code))), name);
      const pair = (await exchange(code).expect(200)).body as TokenPair;
      await me(pair.access_token).expect(200);
    });

    it.each(['client_id', 'client_secret'])('credentials in the form repeating %s', async (name) => {
      const code = await ann.code(params());
      const fields: [string, string][] = [['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', CALLBACK], ['client_id', app.clientId], ['client_secret', app.clientSecret!]];
      fields.push(name === 'client_id' ? ['client_id', app.clientId] : ['client_secret', 'cws_other']);
      expectRepeated(await post('/oauth/token', form(fields), false), name);
      await exchange(code).expect(200);
    });

    it.each(['refresh_token', 'scope'])('a refresh repeating %s; the pair still works and rotates', async (name) => {
      const pair = await firstPair();
      const fields: [string, string][] = [['grant_type', 'refresh_token'], ['refresh_token', pair.refresh_token], [name, name === 'scope' ? 'read_user' : pair.refresh_token]];
      if (name === 'scope') fields.push(['scope', 'read_user']);
      expectRepeated(await post('/oauth/token', form(fields)), name);
      await me(pair.access_token).expect(200);
      const next = (await refresh(pair.refresh_token).expect(200)).body as TokenPair;
      expect(next.scope).toBe(pair.scope);
    });

    it.each(['token', 'client_id'])('a revocation repeating %s revokes nothing', async (name) => {
      const pair = await firstPair();
      const fields: [string, string][] = [['token', pair.refresh_token], ['client_id', app.clientId], ['client_secret', app.clientSecret!]];
      fields.push(name === 'token' ? ['token', pair.access_token] : ['client_id', app.clientId]);
      expectRepeated(await post('/oauth/revoke', form(fields), false), name);
      await me(pair.access_token).expect(200);
      await refresh(pair.refresh_token).expect(200);
    });
  });

  // RFC 6749 §2.3: one authentication method per request. The library read
  // the Basic header and ignored the form, so a client_secret (right or
  // wrong) or another client's client_id beside it was let through.
  describe('client credentials sent two ways (RFC 6749 §2.3)', () => {
    const TWO_WAYS = {
      error: 'invalid_request',
      error_description: 'Client credentials are sent two ways, in the Authorization header (HTTP Basic) and the `client_secret` form field: use one (RFC 6749 section 2.3)',
    };
    const OTHER_CLIENT = { error: 'invalid_request', error_description: 'Invalid parameter: `client_id` is not the client the Authorization header (HTTP Basic) names' };
    const refused = (res: { status: number; body: unknown; headers: Record<string, string> }, body: unknown) => {
      expect({ status: res.status, body: res.body, cacheControl: res.headers['cache-control'] }).toEqual({ status: 400, body, cacheControl: 'no-store' });
    };
    const exchangeFields = (code: string) => [['grant_type', 'authorization_code'], ['code', code], ['redirect_uri', CALLBACK]] as [string, string][];

    it.each([
      ['its own secret', () => app.clientSecret!],
      ['another secret', () => 'cws_other'],
      ['an empty secret', () => ''],
    ])('Basic and a client_secret field (%s) is invalid_request at both endpoints; the code, the pair and the refresh token stay usable', async (_what, secret) => {
      const code = await ann.code(params());
      refused(await post('/oauth/token', form([...exchangeFields(code), ['client_secret', secret()]])), TWO_WAYS);
      const pair = (await exchange(code).expect(200)).body as TokenPair;
      refused(await post('/oauth/token', form([['grant_type', 'refresh_token'], ['refresh_token', pair.refresh_token], ['client_secret', secret()]])), TWO_WAYS);
      refused(await post('/oauth/revoke', form([['token', pair.refresh_token], ['client_id', app.clientId], ['client_secret', secret()]])), TWO_WAYS);
      await me(pair.access_token).expect(200);
      await refresh(pair.refresh_token).expect(200);
    });

    it('Basic and a client_id field naming the same client is taken at both endpoints', async () => {
      const code = await ann.code(params());
      const pair = (await post('/oauth/token', form([...exchangeFields(code), ['client_id', app.clientId]])).expect(200)).body as TokenPair;
      const next = (await post('/oauth/token', form([['grant_type', 'refresh_token'], ['refresh_token', pair.refresh_token], ['client_id', app.clientId]])).expect(200)).body as TokenPair;
      await post('/oauth/revoke', form([['token', next.refresh_token], ['client_id', app.clientId]])).expect(200);
      await me(next.access_token).expect(401);
    });

    it('Basic and a client_id field naming another client (or none) is invalid_request at both endpoints, and changes nothing', async () => {
      const other = await ann.registerApp([CALLBACK], 'public', 'Other client');
      for (const clientId of [other.clientId, '', app.clientId.toUpperCase()]) {
        const code = await ann.code(params());
        refused(await post('/oauth/token', form([...exchangeFields(code), ['client_id', clientId]])), OTHER_CLIENT);
        const pair = (await exchange(code).expect(200)).body as TokenPair;
        refused(await post('/oauth/revoke', form([['token', pair.refresh_token], ['client_id', clientId]])), OTHER_CLIENT);
        await me(pair.access_token).expect(200);
        await refresh(pair.refresh_token).expect(200);
      }
    });

    // The token endpoint fell back to the form when it could not read the header, and let a public client in by its client_id.
    it('a Basic header that cannot be read is invalid_client (401), whatever client_id the form names', async () => {
      const publicApp = await ann.registerApp([CALLBACK], 'public', 'Public with a broken header');
      const { verifier, challenge } = pkce();
      const code = await ann.code(params({ client_id: publicApp.clientId, code_challenge: challenge, code_challenge_method: 'S256' }));
      const fields = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: publicApp.clientId, code_verifier: verifier };
      for (const authorization of [`Basic ${Buffer.from(publicApp.clientId).toString('base64')}`, 'Basic', `Basic ${Buffer.from(`${publicApp.clientId}:x\ny`).toString('base64')}`]) {
        const res = await t.http.post('/oauth/token').type('form').set('Authorization', authorization).send(fields);
        expect({ authorization, status: res.status, body: res.body, challenge: res.headers['www-authenticate'] }).toEqual({
          authorization,
          status: 401,
          body: { error: 'invalid_client', error_description: 'Invalid client: cannot retrieve client credentials' },
          challenge: 'Basic realm="cardwork"',
        });
      }
      await tokenRequest(t, fields).expect(200);
    });
  });

  describe('a refresh asking a scope twice', () => {
    it('gets it once, as the authorization request does', async () => {
      const pair = await firstPair();
      const narrowed = (await refresh(pair.refresh_token, 'read_user read_user').expect(200)).body as TokenPair;
      expect(narrowed.scope).toBe('read_user');
      const next = (await refresh(narrowed.refresh_token).expect(200)).body as TokenPair;
      expect(next.scope).toBe('read_user');
      // The same rule at authorization: the code's pair holds each scope once.
      const code = await ann.code(params({ scope: 'read_user read_user read_workspace' }));
      expect(((await exchange(code).expect(200)).body as TokenPair).scope).toBe('read_user read_workspace');
    });
  });

  describe('an empty state (state=)', () => {
    it('is accepted and passed back as sent, on approval, denial and a refusal', async () => {
      const approved = await ann.decide(params({ state: '' }));
      expect(approved.searchParams.get('code')).toMatch(/^cwz_/);
      expect(approved.searchParams.has('state')).toBe(true);
      expect(approved.searchParams.get('state')).toBe('');
      await exchange(approved.searchParams.get('code')!).expect(200);

      const denied = await ann.decide(params({ state: '' }), 'deny');
      expect(denied.searchParams.get('error')).toBe('access_denied');
      expect(denied.searchParams.get('state')).toBe('');

      const refused = new URL((await ann.authorize(params({ state: '', scope: 'admin' })).expect(302)).headers.location as string);
      expect(refused.searchParams.get('error')).toBe('invalid_scope');
      expect(refused.searchParams.get('state')).toBe('');
    });

    it('is not added when the request sent no state', async () => {
      const approved = await ann.decide(params());
      expect(approved.searchParams.get('code')).toMatch(/^cwz_/);
      expect(approved.searchParams.has('state')).toBe(false);
    });
  });

  describe('revocation without client authentication', () => {
    it('is invalid_client, as at the token endpoint', async () => {
      const pair = await firstPair();
      const revoked = await t.http.post('/oauth/revoke').type('form').send({ token: pair.refresh_token }).expect(400);
      const token = await t.http.post('/oauth/token').type('form').send({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }).expect(400);
      expect(revoked.body.error).toBe('invalid_client');
      expect(revoked.body).toEqual(token.body);
      expect(revoked.headers['www-authenticate']).toBeUndefined();
      await me(pair.access_token).expect(200);
    });

    // RFC 6749 §5.2: a client that tried the Authorization header gets 401 (the token endpoint answered 400 for one it could not read).
    it.each([`Basic ${Buffer.from('no-colon').toString('base64')}`, 'Bearer cwa_x'])('with an Authorization header naming no client (%s) is 401 with a Basic challenge at both endpoints', async (authorization) => {
      const pair = await firstPair();
      const header = { Authorization: authorization };
      const revoked = await t.http.post('/oauth/revoke').type('form').set(header).send({ token: pair.refresh_token }).expect(401);
      const token = await t.http.post('/oauth/token').type('form').set(header).send({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }).expect(401);
      expect(revoked.body.error).toBe('invalid_client');
      expect(revoked.body).toEqual(token.body);
      expect(revoked.headers['www-authenticate']).toBe('Basic realm="cardwork"');
      expect(token.headers['www-authenticate']).toBe('Basic realm="cardwork"');
      await me(pair.access_token).expect(200);
    });

    it('a public client still revokes with its client_id alone', async () => {
      const publicApp = await ann.registerApp([CALLBACK], 'public', 'Public revoker');
      const { verifier, challenge } = pkce();
      const code = await ann.code(params({ client_id: publicApp.clientId, code_challenge: challenge, code_challenge_method: 'S256' }));
      const pair = (await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: publicApp.clientId, code_verifier: verifier }).expect(200)).body as TokenPair;
      await t.http.post('/oauth/revoke').type('form').send({ token: pair.refresh_token, client_id: publicApp.clientId }).expect(200);
      await me(pair.access_token).expect(401);
    });
  });

  describe('the developer page', () => {
    it('refuses to rotate the secret of a public application (it has none) with a 400 page, and leaves it public', async () => {
      const bea = webUser(t);
      await bea.signUp('bea');
      const publicApp = await bea.registerApp([CALLBACK], 'public', 'No secret');
      const page = await bea.agent.get('/developer').expect(200);
      const id = /action="\/developer\/apps\/(\d+)\/delete"/.exec(page.text)![1];
      expect(page.text).not.toContain(`/developer/apps/${id}/rotate-secret`);
      const refused = await bea.agent.post(`/developer/apps/${id}/rotate-secret`).type('form').send({ _csrf: csrfOf(page.text) }).expect(400);
      expect(refused.headers['content-type']).toMatch(/^text\/html/);
      expect(refused.text).toContain('This is a public application: it has no client secret to rotate');
      expect(refused.text).not.toContain('client-secret');
      const after = await bea.agent.get('/developer').expect(200);
      expect(after.text).toContain('public (no secret; PKCE required)');
      // Still public: its client_id alone authenticates it.
      await t.http.post('/oauth/revoke').type('form').send({ token: 'cwa_x', client_id: publicApp.clientId }).expect(200);
      // Another owner's (or no) application is still not found.
      const cid = webUser(t);
      await cid.signUp('cid');
      const cidPage = await cid.agent.get('/developer').expect(200);
      await cid.agent.post(`/developer/apps/${id}/rotate-secret`).type('form').send({ _csrf: csrfOf(cidPage.text) }).expect(404);
      await cid.agent.post(`/developer/apps/999999/rotate-secret`).type('form').send({ _csrf: csrfOf(cidPage.text) }).expect(404);
    });

    it.each([
      ['https:evil.com/cb', 'https://evil.com/cb'],
      ['https://good.com\\@evil.com/', 'https://good.com/@evil.com/'],
      ['https://app.example.test', 'https://app.example.test/'],
      ['https://App.Example.test/cb', 'https://app.example.test/cb'],
    ])('refuses a redirect URI that parses to another (%s)', async (uri, parsed) => {
      const page = await ann.agent.get('/developer').expect(200);
      const bad = await ann.agent
        .post('/developer/apps')
        .type('form')
        .send({ _csrf: csrfOf(page.text), name: 'Crooked', redirect_uris: `${CALLBACK}\n${uri}`, client_type: 'confidential' })
        .expect(400);
      expect(bad.text).toContain('class="error"');
      expect(bad.text).toContain(`is read as ${parsed}; register it in that form if that is where it should lead`);
      expect((await ann.agent.get('/developer').expect(200)).text).not.toContain('Crooked');
    });

    it('registers real-looking redirect URIs, and sends the browser back to them as registered', async () => {
      const uris = ['https://app.example.com/callback', 'http://127.0.0.1:8080/cb', 'com.example.app:/oauth', 'https://app.example.com/cb?tenant=a'];
      const registered = await ann.registerApp(uris, 'confidential', 'Real');
      for (const uri of uris) {
        const back = await ann.decide({ response_type: 'code', client_id: registered.clientId, redirect_uri: uri, scope: 'read_user', state: 's' });
        expect(back.href.startsWith(uri)).toBe(true);
        expect(back.searchParams.get('code')).toMatch(/^cwz_/);
      }
    });
  });
});
