import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { OAuthGrantsRepository } from '../../../src/modules/identity/infrastructure/oauth-grants.repository.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { pkce, tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { itOnPostgres } from '../../support/on-postgres.js';

const CALLBACK = 'https://app.example.test/callback';

interface TokenPair {
  access_token: string;
  refresh_token: string;
}
const API = '/api/1.0';

describe('OAuth 2.0 authorization code flow', () => {
  let t: TestApp;
  let ann: WebUser;
  let confidential: RegisteredApp;
  let publicApp: RegisteredApp;

  const params = (app: RegisteredApp, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: CALLBACK,
    scope: 'read_user read_workspace',
    ...extra,
  });
  const basic = (app: RegisteredApp) => ({ id: app.clientId, secret: app.clientSecret! });
  const exchange = (app: RegisteredApp, code: string, extra: Record<string, string> = {}) =>
    tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...extra }, app.clientSecret ? basic(app) : undefined);
  const me = (accessToken: string) => t.http.get(`${API}/me`).set('Authorization', `Bearer ${accessToken}`);

  beforeAll(async () => {
    t = await createTestApp();
    ann = webUser(t);
    await ann.signUp('ann');
    confidential = await ann.registerApp([CALLBACK, 'http://127.0.0.1:9999/cb']);
    publicApp = await ann.registerApp([CALLBACK], 'public', 'Public app');
  });
  afterAll(() => t.close());

  it('issues a code on approval, returns state untouched, and exchanges it for tokens that call the API', async () => {
    const state = 'xyz 123/?&=+%~';
    const back = await ann.decide(params(confidential, { state }));
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('state')).toBe(state);
    const res = await exchange(confidential, back.searchParams.get('code')!).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'read_user read_workspace' });
    // The lifetime it was issued with, not the whole seconds left once it is a few ms old (3599).
    expect(res.body.expires_in).toBe(3600);
    expect(res.body.access_token).toMatch(/^cwa_/);
    expect(res.body.refresh_token).toMatch(/^cwr_/);
    const user = await me(res.body.access_token).expect(200);
    expect(user.body.username).toBe('ann');
  });

  it('accepts the client credentials as form fields too', async () => {
    const code = await ann.code(params(confidential));
    await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: confidential.clientId,
      client_secret: confidential.clientSecret!,
    }).expect(200);
  });

  it('refuses a confidential client with a wrong or missing secret', async () => {
    const code = await ann.code(params(confidential));
    const wrong = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, { id: confidential.clientId, secret: 'cws_wrong' }).expect(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic/);
    const missing = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: confidential.clientId }).expect(400);
    expect(missing.body.error).toBe('invalid_client');
  });

  it('answers a denial with access_denied and the state', async () => {
    const back = await ann.decide(params(confidential, { state: 's1' }), 'deny');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s1');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('sends a visitor who is not logged in to the login page, then back to the consent page', async () => {
    const visitor = webUser(t);
    const res = await visitor.authorize(params(confidential)).expect(303);
    expect(res.headers.location).toMatch(/^\/login\?next=%2Foauth%2Fauthorize%3F/);
  });

  describe('PKCE (S256 only)', () => {
    it('is required for a public client', async () => {
      const res = await ann.authorize(params(publicApp, { state: 'p' })).expect(302);
      const back = new URL(res.headers.location as string);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
      expect(back.searchParams.get('state')).toBe('p');
    });

    it('lets a public client exchange its code with the right verifier and no secret', async () => {
      const { verifier, challenge } = pkce();
      const code = await ann.code(params(publicApp, { code_challenge: challenge, code_challenge_method: 'S256' }));
      const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: publicApp.clientId, code_verifier: verifier }).expect(200);
      await me(res.body.access_token).expect(200);
      // and refreshes with its client id alone
      const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: publicApp.clientId }).expect(200);
      await me(refreshed.body.access_token).expect(200);
    });

    it('refuses a wrong verifier, and the code is spent', async () => {
      const { verifier, challenge } = pkce();
      const code = await ann.code(params(publicApp, { code_challenge: challenge }));
      const base = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: publicApp.clientId };
      const res = await tokenRequest(t, { ...base, code_verifier: pkce().verifier }).expect(400);
      expect(res.body.error).toBe('invalid_grant');
      await tokenRequest(t, { ...base, code_verifier: verifier }).expect(400);
    });

    it('enforces a challenge a confidential client sent', async () => {
      const { verifier, challenge } = pkce();
      const code = await ann.code(params(confidential, { code_challenge: challenge, code_challenge_method: 'S256' }));
      const res = await exchange(confidential, code).expect(400);
      expect(res.body.error).toBe('invalid_grant');
      const other = await ann.code(params(confidential, { code_challenge: challenge, code_challenge_method: 'S256' }));
      await exchange(confidential, other, { code_verifier: verifier }).expect(200);
    });

    it('refuses the plain method and malformed challenges', async () => {
      const { verifier } = pkce();
      const cases: Array<Record<string, string>> = [
        { code_challenge: verifier, code_challenge_method: 'plain' },
        { code_challenge: 'short', code_challenge_method: 'S256' },
        { code_challenge_method: 'S256' },
      ];
      for (const extra of cases) {
        const res = await ann.authorize(params(publicApp, extra)).expect(302);
        expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request');
      }
    });
  });

  describe('redirect URIs match exactly; a bad one is an error page, never a redirect', () => {
    it.each([
      ['a trailing slash', `${CALLBACK}/`],
      ['another case', CALLBACK.replace('callback', 'Callback')],
      ['an upper-case host', CALLBACK.replace('app.example', 'APP.example')],
      ['an extra query', `${CALLBACK}?next=1`],
      ['another host', 'https://evil.example.test/callback'],
      ['another port', 'https://app.example.test:8443/callback'],
      ['http instead of https', CALLBACK.replace('https', 'http')],
    ])('%s', async (_label, redirectUri) => {
      const res = await ann.authorize(params(confidential, { redirect_uri: redirectUri })).expect(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/redirect_uri is not one the application registered/);
    });

    it('also for an unknown client or a missing redirect_uri, before any login', async () => {
      const visitor = webUser(t);
      const unknown = await visitor.authorize(params(confidential, { client_id: 'cwc_nobody' })).expect(400);
      expect(unknown.headers.location).toBeUndefined();
      const { redirect_uri: _omitted, ...rest } = params(confidential);
      const missing = await visitor.authorize(rest).expect(400);
      expect(missing.text).toMatch(/redirect_uri/);
    });

    it('and the token request must name the same redirect URI', async () => {
      const code = await ann.code(params(confidential));
      const res = await exchange(confidential, code, { redirect_uri: 'http://127.0.0.1:9999/cb' }).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });

  describe('scopes', () => {
    it.each([['admin'], ['read_user write_everything'], ['']])('refuses scope "%s" with invalid_scope', async (scope) => {
      const res = await ann.authorize(params(confidential, { scope, state: 'q' })).expect(302);
      const back = new URL(res.headers.location as string);
      expect(back.searchParams.get('error')).toBe('invalid_scope');
      expect(back.searchParams.get('state')).toBe('q');
    });

    it('names the application and each scope on the consent page', async () => {
      const res = await ann.authorize(params(confidential, { scope: 'write_workspace' })).expect(200);
      expect(res.text).toContain('Test app');
      expect(res.text).toContain('write_workspace');
      expect(res.headers['x-frame-options']).toBe('DENY');
    });
  });

  describe('codes', () => {
    it('are single use: a replay is invalid_grant and revokes the tokens issued from the code', async () => {
      const code = await ann.code(params(confidential));
      const first = await exchange(confidential, code).expect(200);
      await me(first.body.access_token).expect(200);
      const replay = await exchange(confidential, code).expect(400);
      expect(replay.body.error).toBe('invalid_grant');
      await me(first.body.access_token).expect(401);
      const refresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, basic(confidential)).expect(400);
      expect(refresh.body.error).toBe('invalid_grant');
    });

    // RFC 6749 §4.1.2: a code used more than once is refused, and what it
    // issued is revoked. Sent several times at once, every request but one
    // is a replay, so whichever finishes first, no token outlives the race.
    it('sent several times at once: at most one token is issued, and it is revoked with the rest', async () => {
      const code = await ann.code(params(confidential));
      const answers = await Promise.all(Array.from({ length: 6 }, () => exchange(confidential, code)));
      const issued = answers.filter((r) => r.status === 200);
      expect(issued.length).toBeLessThanOrEqual(1);
      for (const refused of answers.filter((r) => r.status !== 200)) {
        expect(refused.status).toBe(400);
        expect(refused.body.error).toBe('invalid_grant');
      }
      for (const r of issued) {
        await me(r.body.access_token).expect(401);
        const refresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: r.body.refresh_token }, basic(confidential)).expect(400);
        expect(refresh.body.error).toBe('invalid_grant');
      }
    });

    it('expire after 10 minutes', async () => {
      const code = await ann.code(params(confidential));
      const [stored] = await dbQuery(t, `SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM identity.oauth_codes ORDER BY id DESC LIMIT 1`);
      expect(Number(stored.seconds)).toBeGreaterThanOrEqual(599);
      expect(Number(stored.seconds)).toBeLessThanOrEqual(601);
      await dbQuery(t, `UPDATE identity.oauth_codes SET expires_at = now() - interval '1 second' WHERE id = (SELECT max(id) FROM identity.oauth_codes)`);
      const res = await exchange(confidential, code).expect(400);
      expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/expired/) });
    });

    it('belong to the client they were issued to', async () => {
      const other = await ann.registerApp([CALLBACK]);
      const code = await ann.code(params(confidential));
      const res = await exchange(other, code).expect(400);
      expect(res.body.error).toBe('invalid_grant');
    });
  });

  describe('refresh tokens', () => {
    it('rotate: the new pair works, the old refresh token is refused and its reuse ends the authorization', async () => {
      const first = await exchange(confidential, await ann.code(params(confidential))).expect(200);
      const second = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, basic(confidential)).expect(200);
      expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
      expect(second.body.scope).toBe('read_user read_workspace');
      expect(second.body.expires_in).toBe(3600);
      await me(second.body.access_token).expect(200);
      await me(first.body.access_token).expect(401);
      const reuse = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, basic(confidential)).expect(400);
      expect(reuse.body.error).toBe('invalid_grant');
      await me(second.body.access_token).expect(401);
    });

    // RFC 9700 §4.14.2: every use of a refresh token but the first is a
    // reuse, and a reuse ends the authorization. Sent six times at once, no
    // token of the authorization may outlive the race, in either order: a
    // reuse seen before the winner stored its new pair (the pair is refused)
    // or after (the pair is revoked).
    describe('sent six times at once: afterwards no token of the authorization works', () => {
      const refresh = (refreshToken: string) =>
        tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken }, basic(confidential));
      const grants = () => t.app.get(OAuthGrantsRepository, { strict: false });

      /** Six uses of the pair's refresh token; `onAnswer` sees how many have answered. */
      async function race(first: TokenPair, onAnswer: (answered: number) => void = () => {}) {
        let answered = 0;
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => refresh(first.refresh_token).then((r) => (onAnswer(++answered), r))),
        );
        const issued = answers.filter((r) => r.status === 200);
        expect(issued.length).toBeLessThanOrEqual(1);
        for (const refused of answers.filter((r) => r.status !== 200)) {
          expect(refused.status).toBe(400);
          expect(refused.body.error).toBe('invalid_grant');
        }
        // Access tokens first, then the newest refresh token: presenting the
        // old one again would itself end the authorization.
        const pairs = [...issued.map((r) => r.body as TokenPair), first];
        for (const pair of pairs) await me(pair.access_token).expect(401);
        for (const pair of pairs) expect((await refresh(pair.refresh_token).expect(400)).body.error).toBe('invalid_grant');
        return issued.length;
      }
      const firstPair = async () => (await exchange(confidential, await ann.code(params(confidential))).expect(200)).body as TokenPair;

      afterEach(() => {
        jest.restoreAllMocks();
      });

      it('as they come (a few rounds)', async () => {
        for (let round = 0; round < 6; round++) await race(await firstPair());
      });

      // The pair is replaced in the statement that stores the new one: the
      // first store wins, and each later one finds the pair gone (a reuse).
      it('all read the token while valid, one stores its pair first: the others end the authorization, that pair included', async () => {
        const first = await firstPair();
        const repo = grants();
        const [find, insert] = [repo.findRefresh.bind(repo), repo.insertToken.bind(repo)];
        // All six read the token while it is still valid; the first to store
        // a pair wins, and the others store only once the winner has answered.
        const allRead = deferred();
        const winnerAnswered = deferred();
        let reads = 0;
        let stores = 0;
        jest.spyOn(repo, 'findRefresh').mockImplementation(async (hash) => {
          const row = await find(hash);
          if (++reads === 6) allRead.resolve();
          await allRead.promise;
          return row;
        });
        jest.spyOn(repo, 'insertToken').mockImplementation(async (row, uses) => {
          if (stores++ > 0) await winnerAnswered.promise;
          return insert(row, uses);
        });
        expect(await race(first, (n) => n === 1 && winnerAnswered.resolve())).toBe(1);
      });

      itOnPostgres('a reuse marked but not yet committed when the winner stores its pair: the pair waits, then is refused', async () => {
        const first = await firstPair();
        const [{ grant_id: grantId }] = await dbQuery(t, `SELECT grant_id FROM identity.oauth_tokens ORDER BY id DESC LIMIT 1`);
        // What endGrant's first statement does, held open in a transaction of
        // its own: the refresh's insert must wait for it and then see it.
        const reuse = t.app.get(DataSource).createQueryRunner();
        await reuse.connect();
        try {
          await reuse.startTransaction();
          await reuse.query(`UPDATE identity.oauth_codes SET replayed_at = now() WHERE id = $1`, [grantId]);
          const answer = refresh(first.refresh_token).then((r) => r);
          await waitForLockWait(t);
          await reuse.commitTransaction();
          const res = await answer;
          expect(res.status).toBe(400);
          expect(res.body.error).toBe('invalid_grant');
        } finally {
          if (reuse.isTransactionActive) await reuse.rollbackTransaction();
          await reuse.release();
        }
      });
    });

    it('ended (revoked by the client) after the refresh read its token: the new pair is refused', async () => {
      const first = (await exchange(confidential, await ann.code(params(confidential))).expect(200)).body as TokenPair;
      const repo = t.app.get(OAuthGrantsRepository, { strict: false });
      const insert = repo.insertToken.bind(repo);
      jest.spyOn(repo, 'insertToken').mockImplementationOnce(async (row, uses) => {
        await t.http.post('/oauth/revoke').type('form').auth(confidential.clientId, confidential.clientSecret!).send({ token: first.access_token }).expect(200);
        return insert(row, uses);
      });
      const refused = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token }, basic(confidential)).expect(400);
      expect(refused.body.error).toBe('invalid_grant');
      await me(first.access_token).expect(401);
      expect(await tokenRows(t, await grantOf(t, first.refresh_token))).toBe(1);
      jest.restoreAllMocks();
    });

    it('keep working after their code row would have been cleaned up, and only so long', async () => {
      const first = await exchange(confidential, await ann.code(params(confidential))).expect(200);
      const [{ grant_id: grantId }] = await dbQuery(t, `SELECT grant_id FROM identity.oauth_tokens ORDER BY id DESC LIMIT 1`);
      const grantRow = async () => (await dbQuery(t, `SELECT id FROM identity.oauth_codes WHERE id = ${Number(grantId)}`)).length;
      await dbQuery(t, `UPDATE identity.oauth_codes SET expires_at = now() - interval '2 days' WHERE id = ${Number(grantId)}`);
      await ann.code(params(confidential)); // storing a code cleans up old ones
      expect(await grantRow()).toBe(1);
      const second = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, basic(confidential)).expect(200);
      await me(second.body.access_token).expect(200);
      await t.http.post('/oauth/revoke').type('form').auth(confidential.clientId, confidential.clientSecret!).send({ token: second.body.refresh_token }).expect(200);
      // Kept a day past the revocation, then gone with its token rows.
      await ann.code(params(confidential));
      expect(await grantRow()).toBe(1);
      await dbQuery(t, `UPDATE identity.oauth_tokens SET revoked_at = revoked_at - interval '25 hours' WHERE grant_id = $1`, [grantId]);
      await ann.code(params(confidential));
      expect(await grantRow()).toBe(0);
      expect(await tokenRows(t, Number(grantId))).toBe(0);
    });

    it('may narrow but never widen the scopes', async () => {
      const first = await exchange(confidential, await ann.code(params(confidential))).expect(200);
      const wider = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, scope: 'write_workspace' }, basic(confidential)).expect(400);
      expect(wider.body.error).toBe('invalid_scope');
    });
  });

  // Token rows go with their authorization's grant row (a foreign key), a day
  // after its last token stopped working; until then the hash of every
  // refresh token it rotated stays (a superseded pair's row does not:
  // rotated-refresh-tokens.e2e-spec) for the lifetime it had as a refresh
  // token, so that presenting one again still ends the authorization.
  describe('clean-up of token rows', () => {
    const refresh = (refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken }, basic(confidential));
    const cleanUp = () => ann.code(params(confidential)); // storing a code cleans up
    /** An authorization refreshed once: its first (rotated) pair and its current one. */
    async function refreshedOnce(): Promise<{ grantId: number; first: TokenPair; second: TokenPair }> {
      const first = (await exchange(confidential, await ann.code(params(confidential))).expect(200)).body as TokenPair;
      const second = (await refresh(first.refresh_token).expect(200)).body as TokenPair;
      return { grantId: await grantOf(t, second.refresh_token), first, second };
    }

    afterEach(() => {
      jest.restoreAllMocks();
    });

    it('deletes an authorization whose last refresh token expired over a day ago, with every token row of it', async () => {
      const { grantId, second } = await refreshedOnce();
      await age(t, grantId, '30 days 12 hours');
      await cleanUp();
      expect(await tokenRows(t, grantId)).toBe(1);
      expect(await rotatedRows(t, grantId)).toBe(0); // past its own 30 days already
      await age(t, grantId, '2 days');
      await cleanUp();
      expect(await tokenRows(t, grantId)).toBe(0);
      expect(await rotatedRows(t, grantId)).toBe(0);
      expect(await dbQuery(t, `SELECT id FROM identity.oauth_codes WHERE id = $1`, [grantId])).toEqual([]);
      expect((await refresh(second.refresh_token).expect(400)).body.error).toBe('invalid_grant');
    });

    it('keeps the rotated refresh tokens of a live authorization within their lifetime: their reuse still ends it', async () => {
      const { grantId, first, second } = await refreshedOnce();
      await age(t, grantId, '29 days'); // rotated 29 days ago, the code long expired; the current refresh token still valid
      await cleanUp();
      expect(await tokenRows(t, grantId)).toBe(1);
      expect(await rotatedRows(t, grantId)).toBe(1);
      expect((await refresh(first.refresh_token).expect(400)).body.error).toBe('invalid_grant');
      await me(second.access_token).expect(401);
      expect((await refresh(second.refresh_token).expect(400)).body.error).toBe('invalid_grant');
    });

    it('keeps an authorization whose refresh runs while it is cleaned up', async () => {
      const first = (await exchange(confidential, await ann.code(params(confidential))).expect(200)).body as TokenPair;
      const grantId = await grantOf(t, first.refresh_token);
      await age(t, grantId, '2 days'); // access token long expired, the code too; refresh token valid
      // The clean-up runs after the refresh read the old pair, before it replaces it with the new one.
      const repo = t.app.get(OAuthGrantsRepository, { strict: false });
      const insert = repo.insertToken.bind(repo);
      jest.spyOn(repo, 'insertToken').mockImplementation(async (row, uses) => (await cleanUp(), insert(row, uses)));
      const second = (await refresh(first.refresh_token).expect(200)).body as TokenPair;
      await me(second.access_token).expect(200);
      expect(await tokenRows(t, grantId)).toBe(1);
      expect(await rotatedRows(t, grantId)).toBe(1);
    });
  });

  describe('access tokens', () => {
    it('are accepted only as Authorization: Bearer, and a bad one gets a Bearer challenge', async () => {
      const { body } = await exchange(confidential, await ann.code(params(confidential))).expect(200);
      await t.http.get(`${API}/me`).query({ access_token: body.access_token }).expect(401);
      const bad = await me(`${body.access_token}x`).expect(401);
      expect(bad.headers['www-authenticate']).toMatch(/^Bearer realm="cardwork", error="invalid_token"/);
      expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    });

    it('stop working an hour after issue', async () => {
      const { body } = await exchange(confidential, await ann.code(params(confidential))).expect(200);
      const [row] = await dbQuery(t, `SELECT extract(epoch FROM access_expires_at - created_at)::int AS seconds FROM identity.oauth_tokens ORDER BY id DESC LIMIT 1`);
      expect(Number(row.seconds)).toBeGreaterThanOrEqual(3599);
      expect(Number(row.seconds)).toBeLessThanOrEqual(3601);
      await dbQuery(t, `UPDATE identity.oauth_tokens SET access_expires_at = now() - interval '1 second' WHERE id = (SELECT max(id) FROM identity.oauth_tokens)`);
      await me(body.access_token).expect(401);
    });

    it('can be revoked by the client (RFC 7009), which ends the whole authorization', async () => {
      const { body } = await exchange(confidential, await ann.code(params(confidential))).expect(200);
      await t.http.post('/oauth/revoke').type('form').auth(confidential.clientId, confidential.clientSecret!).send({ token: body.refresh_token }).expect(200);
      await me(body.access_token).expect(401);
      await t.http.post('/oauth/revoke').type('form').auth(confidential.clientId, confidential.clientSecret!).send({ token: 'cwa_unknown' }).expect(200);
      const noClient = await t.http.post('/oauth/revoke').type('form').send({ token: body.access_token }).expect(400);
      expect(noClient.body.error).toBe('invalid_client');
    });
  });

  // Clients parse RFC 6749 JSON here whatever went wrong; the revocation
  // answered an HTML error page when the database failed. (A database that
  // is away is a 503 temporarily_unavailable: hardening/database-troubles.)
  it('answers a failure behind either endpoint with 500 server_error in RFC 6749 JSON', async () => {
    const { body } = await exchange(confidential, await ann.code(params(confidential))).expect(200);
    const repo = t.app.get(OAuthGrantsRepository, { strict: false });
    const lost = () => Promise.reject(new TypeError('Cannot read properties of undefined'));
    jest.spyOn(repo, 'findRefresh').mockImplementation(lost);
    jest.spyOn(repo, 'grantOfToken').mockImplementation(lost);
    try {
      const answers = [
        await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: body.refresh_token }, basic(confidential)),
        await t.http.post('/oauth/revoke').type('form').auth(confidential.clientId, confidential.clientSecret!).send({ token: body.refresh_token }),
      ];
      for (const res of answers) {
        expect({ status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
          status: 500,
          type: expect.stringMatching(/^application\/json/),
          body: { error: 'server_error', error_description: expect.any(String) },
        });
        expect(res.headers['cache-control']).toBe('no-store');
      }
    } finally {
      jest.restoreAllMocks();
    }
    await me(body.access_token).expect(200);
  });

  it('stores no code, token or client secret in clear', async () => {
    const { verifier, challenge } = pkce();
    const code = await ann.code(params(confidential, { code_challenge: challenge }));
    const { body } = await exchange(confidential, code, { code_verifier: verifier }).expect(200);
    const dump = JSON.stringify([
      await dbQuery(t, 'SELECT * FROM identity.oauth_codes'),
      await dbQuery(t, 'SELECT * FROM identity.oauth_tokens'),
      await dbQuery(t, 'SELECT * FROM identity.oauth_clients'),
      await dbQuery(t, 'SELECT * FROM web.sessions'),
    ]);
    for (const secret of [code, body.access_token, body.refresh_token, confidential.clientSecret!]) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(4, 20));
    }
    expect(dump).toContain(confidential.clientId);
  });

  it('refuses token requests with parameters in the query string, or not form-encoded', async () => {
    const code = await ann.code(params(confidential));
    const inQuery = await t.http.post('/oauth/token').query({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }).auth(confidential.clientId, confidential.clientSecret!).expect(400);
    expect(inQuery.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('not in the query string') });
    // One parameter in the query is enough, whatever the body holds; the code is left as it was.
    const fields = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: confidential.clientId, client_secret: confidential.clientSecret! };
    const partly = await t.http.post('/oauth/token?foo=1').type('form').send(fields).expect(400);
    expect(partly.body.error_description).toContain('not in the query string');
    const revoking = await t.http.post('/oauth/revoke?token=x').type('form').send({ token: 'x', client_id: confidential.clientId, client_secret: confidential.clientSecret! }).expect(400);
    expect(revoking.body.error_description).toContain('not in the query string');
    await t.http.post('/oauth/token').type('form').send(fields).expect(200);
    await t.http.post('/oauth/token').auth(confidential.clientId, confidential.clientSecret!).send({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }).expect(400);
    // Grants this server has not got at all (RFC 6749 §5.2), for any client.
    for (const grant of ['password', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']) {
      const wrongGrant = await tokenRequest(t, { grant_type: grant, username: 'ann', password: 'x' }, basic(confidential)).expect(400);
      expect(wrongGrant.body.error).toBe('unsupported_grant_type');
    }
    const missingGrant = await tokenRequest(t, { code, redirect_uri: CALLBACK }, basic(confidential)).expect(400);
    expect(missingGrant.body.error).toBe('invalid_request');
  });

  // A NUL is what PostgreSQL text cannot hold; elsewhere it is a problem+json
  // 400, but the token and revocation endpoints answer RFC 6749 JSON only.
  it('answers a NUL in any token or revocation parameter with RFC 6749 invalid_request', async () => {
    const code = await ann.code(params(confidential));
    const { body: pair } = await exchange(confidential, await ann.code(params(confidential))).expect(200);
    const creds = { client_id: confidential.clientId, client_secret: confidential.clientSecret! };
    const exchangeFields = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...creds };
    const nul = (value: string) => `${value}\u0000`;
    const cases: Array<[string, Record<string, string>, { id: string; secret: string }?]> = [
      ['/oauth/token', { ...exchangeFields, code: '\u0000' }],
      ['/oauth/token', { ...exchangeFields, code: nul(code) }],
      ['/oauth/token', { ...exchangeFields, client_id: nul(confidential.clientId) }],
      ['/oauth/token', { ...exchangeFields, client_secret: nul(confidential.clientSecret!) }],
      ['/oauth/token', { ...exchangeFields, redirect_uri: nul(CALLBACK) }],
      ['/oauth/token', { ...exchangeFields, code_verifier: nul(pkce().verifier) }],
      ['/oauth/token', { ...exchangeFields, grant_type: nul('authorization_code') }],
      ['/oauth/token', { ...exchangeFields, [nul('extra')]: 'x' }],
      ['/oauth/token', { grant_type: 'refresh_token', refresh_token: nul(pair.refresh_token), ...creds }],
      ['/oauth/token', { grant_type: 'refresh_token', refresh_token: pair.refresh_token, scope: nul('read_user') }, basic(confidential)],
      ['/oauth/token', { grant_type: 'refresh_token', refresh_token: pair.refresh_token }, { id: nul(confidential.clientId), secret: confidential.clientSecret! }],
      ['/oauth/revoke', { token: nul(pair.refresh_token) }, basic(confidential)],
      ['/oauth/revoke', { token: pair.refresh_token, ...creds, client_id: nul(confidential.clientId) }],
      ['/oauth/revoke', { token: pair.refresh_token }, { id: nul(confidential.clientId), secret: confidential.clientSecret! }],
    ];
    for (const [path, fields, auth] of cases) {
      const req = t.http.post(path).type('form');
      if (auth) req.auth(auth.id, auth.secret);
      const res = await req.send(fields);
      expect({ path, fields, status: res.status, type: res.headers['content-type'] }).toEqual({
        path,
        fields,
        status: 400,
        type: expect.stringMatching(/^application\/json/),
      });
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    }
    // Nothing was spent or revoked by the refused requests.
    await exchange(confidential, code).expect(200);
    await me(pair.access_token).expect(200);
  });
});

/** Reads or changes the test's own database directly (time travel, and looking for secrets in clear). */
function dbQuery(t: TestApp, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  return t.app.get(DataSource).query(sql, params);
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** The authorization (grant row) a refresh token belongs to. */
async function grantOf(t: TestApp, refreshToken: string): Promise<number> {
  const [row] = await dbQuery(t, `SELECT grant_id FROM identity.oauth_tokens WHERE refresh_token_hash = $1`, [sha256(refreshToken)]);
  return Number(row.grant_id);
}

async function tokenRows(t: TestApp, grantId: number): Promise<number> {
  return (await dbQuery(t, `SELECT id FROM identity.oauth_tokens WHERE grant_id = $1`, [grantId])).length;
}

/** The refresh tokens an authorization rotated, kept as hashes for reuse detection. */
async function rotatedRows(t: TestApp, grantId: number): Promise<number> {
  return (await dbQuery(t, `SELECT 1 FROM identity.oauth_rotated_refresh_tokens WHERE grant_id = $1`, [grantId])).length;
}

/** Time travel: every time of an authorization (its code and its tokens) moves `interval` back. */
async function age(t: TestApp, grantId: number, interval: string): Promise<void> {
  await dbQuery(
    t,
    `UPDATE identity.oauth_tokens
        SET created_at = created_at - $2::interval, access_expires_at = access_expires_at - $2::interval,
            refresh_expires_at = refresh_expires_at - $2::interval, revoked_at = revoked_at - $2::interval
      WHERE grant_id = $1`,
    [grantId, interval],
  );
  await dbQuery(
    t,
    `UPDATE identity.oauth_codes
        SET created_at = created_at - $2::interval, expires_at = expires_at - $2::interval,
            used_at = used_at - $2::interval, replayed_at = replayed_at - $2::interval
      WHERE id = $1`,
    [grantId, interval],
  );
  await dbQuery(t, `UPDATE identity.oauth_rotated_refresh_tokens SET expires_at = expires_at - $2::interval WHERE grant_id = $1`, [grantId, interval]);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves once some session of the test's database waits for a lock. */
async function waitForLockWait(t: TestApp): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const waiting = await dbQuery(t, `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (waiting.length) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no session came to wait for the lock');
}
