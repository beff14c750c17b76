import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { OAuthGrantsRepository } from '../../../src/modules/identity/infrastructure/oauth-grants.repository.js';
import { tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CALLBACK = 'https://app.example.test/callback';
const OTHER_CALLBACK = 'https://app.example.test/other';
const API = '/api/1.0';

interface TokenPair {
  access_token: string;
  refresh_token: string;
  scope: string;
}

// A failed request changes nothing (DESIGN.md §2). The library revokes the
// refresh token (and spends the code) before it checks the requested scope
// (and the redirect URI), and before it stores the new pair: a refusal at any
// of those steps used to end the authorization, or burn the code. Only a
// replay, by design, ends an authorization (docs/OAUTH.md).
describe('OAuth: a refused token request leaves the code and the tokens as they were', () => {
  let t: TestApp;
  let ann: WebUser;
  let app: RegisteredApp;

  const basic = () => ({ id: app.clientId, secret: app.clientSecret! });
  const newCode = () => ann.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'read_user read_workspace' });
  const exchange = (code: string, redirectUri = CALLBACK) =>
    tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: redirectUri }, basic());
  const refresh = (refreshToken: string, scope?: string) =>
    tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope === undefined ? {} : { scope }) }, basic());
  const me = (accessToken: string) => t.http.get(`${API}/me`).set('Authorization', `Bearer ${accessToken}`);
  const organizations = (accessToken: string) => t.http.get(`${API}/organizations`).set('Authorization', `Bearer ${accessToken}`);
  const firstPair = async () => (await exchange(await newCode()).expect(200)).body as TokenPair;
  /** The pair still works as it did: its access token answers, and its refresh token rotates it (keeping its scope), once. */
  async function stillWorks(pair: TokenPair): Promise<TokenPair> {
    await me(pair.access_token).expect(200);
    const next = (await refresh(pair.refresh_token).expect(200)).body as TokenPair;
    expect(next.scope).toBe(pair.scope);
    await me(next.access_token).expect(200);
    await me(pair.access_token).expect(401);
    return next;
  }
  const grants = () => t.app.get(OAuthGrantsRepository, { strict: false });
  /** The repository's `insertToken` fails once, as when the database goes away while the pair is stored. */
  const failNextStore = () => jest.spyOn(grants(), 'insertToken').mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));

  beforeAll(async () => {
    t = await createTestApp();
    ann = webUser(t);
    await ann.signUp('ann');
    app = await ann.registerApp([CALLBACK, OTHER_CALLBACK]);
  });
  afterAll(() => t.close());
  afterEach(() => {
    jest.restoreAllMocks();
  });

  describe('refresh', () => {
    it.each([['write_workspace'], ['read_user write_workspace'], ['bogus']])(
      'asking scope "%s" (not granted) is invalid_scope, and the access token and refresh token still work',
      async (scope) => {
        const pair = await firstPair();
        const refused = await refresh(pair.refresh_token, scope).expect(400);
        expect(refused.body.error).toBe('invalid_scope');
        await organizations(pair.access_token).expect(200);
        await stillWorks(pair);
      },
    );

    it('that fails to store the new pair (the database lost) answers 503 temporarily_unavailable and leaves the old pair working', async () => {
      const pair = await firstPair();
      failNextStore();
      const failed = await refresh(pair.refresh_token).expect(503);
      expect(failed.body.error).toBe('temporarily_unavailable');
      await stillWorks(pair);
    });

    it('may narrow the scope, and the narrowed pair rotates like any other', async () => {
      const pair = await firstPair();
      const narrowed = (await refresh(pair.refresh_token, 'read_user').expect(200)).body as TokenPair;
      expect(narrowed.scope).toBe('read_user');
      await me(narrowed.access_token).expect(200);
      await organizations(narrowed.access_token).expect(403);
      await me(pair.access_token).expect(401);
      // Narrowed, it cannot widen back.
      expect((await refresh(narrowed.refresh_token, 'read_user read_workspace').expect(400)).body.error).toBe('invalid_scope');
      await stillWorks(narrowed);
    });

    it('after a refused one, a rotated refresh token presented again still ends the authorization', async () => {
      const pair = await firstPair();
      await refresh(pair.refresh_token, 'write_workspace').expect(400);
      const next = await stillWorks(pair);
      const reuse = await refresh(pair.refresh_token).expect(400);
      expect(reuse.body.error).toBe('invalid_grant');
      await me(next.access_token).expect(401);
      expect((await refresh(next.refresh_token).expect(400)).body.error).toBe('invalid_grant');
    });

    it('a refused refresh of an ended authorization does not bring it back', async () => {
      const pair = await firstPair();
      const next = (await refresh(pair.refresh_token).expect(200)).body as TokenPair;
      expect((await refresh(pair.refresh_token, 'read_user').expect(400)).body.error).toBe('invalid_grant');
      expect((await refresh(next.refresh_token, 'bogus').expect(400)).body.error).toBe('invalid_grant');
      await me(next.access_token).expect(401);
    });
  });

  describe('code exchange', () => {
    it('naming another redirect URI is invalid_request and does not spend the code', async () => {
      const code = await newCode();
      const refused = await exchange(code, OTHER_CALLBACK).expect(400);
      expect(refused.body.error).toBe('invalid_request');
      const pair = (await exchange(code).expect(200)).body as TokenPair;
      await me(pair.access_token).expect(200);
      // Spent now: presenting it again is a replay, which ends the authorization.
      expect((await exchange(code).expect(400)).body.error).toBe('invalid_grant');
      await me(pair.access_token).expect(401);
    });

    it('that fails to store the pair (the database lost) answers 503 temporarily_unavailable and does not spend the code', async () => {
      const code = await newCode();
      failNextStore();
      expect((await exchange(code).expect(503)).body.error).toBe('temporarily_unavailable');
      const pair = (await exchange(code).expect(200)).body as TokenPair;
      await me(pair.access_token).expect(200);
    });
  });
});
