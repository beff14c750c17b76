import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { csrfOf, PASSWORD, tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { startOfAMinute } from '../../support/minute-windows.js';

const API = '/api/1.0';
const CALLBACK = 'https://app.example.test/callback';
const NEW_PASSWORD = 'a new and longer passphrase';

interface TokenPair {
  access_token: string;
  refresh_token: string;
}

/** `res`, once its status is `status` (the page's text shown when it is not). */
function expectStatus(res: request.Response, status: number): request.Response {
  expect({ status: res.status, text: res.status === status ? '' : res.text.slice(0, 2000) }).toEqual({ status, text: '' });
  return res;
}

const sessionOf = (res: request.Response) =>
  (res.headers['set-cookie'] as unknown as string[] | undefined)?.find((c) => c.startsWith('cw_session='))?.split(';')[0];

/**
 * The account page's security forms. Before, a user could neither see nor
 * withdraw the applications they authorized (a grant lived until the app's
 * developer deleted the app), nor change their password (a leaked one could
 * not be stopped, and mints API keys on /account).
 */
describe('account page: authorized applications can be revoked', () => {
  let t: TestApp;
  let dev: WebUser;
  let bob: WebUser;
  let app: RegisteredApp;
  let other: RegisteredApp;

  const basic = (a: RegisteredApp) => ({ id: a.clientId, secret: a.clientSecret! });
  const me = (accessToken: string) => t.http.get(`${API}/me`).set('Authorization', `Bearer ${accessToken}`);
  const authorize = (user: WebUser, a: RegisteredApp, scope = 'read_user') =>
    user.code({ response_type: 'code', client_id: a.clientId, redirect_uri: CALLBACK, scope });
  const exchange = (a: RegisteredApp, code: string) => tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, basic(a));
  const tokens = async (user: WebUser, a: RegisteredApp, scope?: string) => (await exchange(a, await authorize(user, a, scope)).expect(200)).body as TokenPair;
  const refresh = (a: RegisteredApp, refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken }, basic(a));
  /** The id of `name` in the revoke forms of the account page. */
  const appIdOn = (page: string, name: string) => {
    const row = new RegExp(`<tr><td>${name}</td>[\\s\\S]*?action="/account/apps/(\\d+)/revoke"`).exec(page);
    return row ? row[1] : null;
  };

  beforeAll(async () => {
    t = await createTestApp();
    dev = webUser(t);
    await dev.signUp('dev');
    app = await dev.registerApp([CALLBACK], 'confidential', 'Calendar <sync> & "co"');
    other = await dev.registerApp([CALLBACK], 'confidential', 'Other app');
    bob = webUser(t);
    await bob.signUp('bob');
  });
  afterAll(() => t.close());

  it('lists the apps a user authorized, escaped, with their scopes and when', async () => {
    const empty = await bob.agent.get('/account').expect(200);
    expect(empty.text).toContain('No application has access to your account.');
    await tokens(bob, app, 'read_user read_workspace');
    const page = await bob.agent.get('/account').expect(200);
    expect(page.text).toContain('<td>Calendar &lt;sync&gt; &amp; &quot;co&quot;</td>');
    expect(page.text).not.toContain('<sync>');
    const row = /<table id="authorized-apps">[\s\S]*?<\/table>/.exec(page.text)![0];
    expect(row).toContain('<code>read_user</code> <code>read_workspace</code>');
    expect(row.match(/ UTC</g)).toHaveLength(2); // authorized, last token issued
    // the developer authorized nothing: their page lists no app of theirs
    expect((await dev.agent.get('/account').expect(200)).text).toContain('No application has access to your account.');
  });

  it('"Revoke access" ends every authorization of that user for that app at once: tokens 401, refresh and pending code invalid_grant', async () => {
    const first = await tokens(bob, app);
    const second = await tokens(bob, app, 'write_workspace');
    const refreshed = (await refresh(app, second.refresh_token).expect(200)).body as TokenPair;
    const pendingCode = await authorize(bob, app);
    const otherApp = await tokens(bob, other);
    const devsOwn = await tokens(dev, app);
    await me(first.access_token).expect(200);

    const page = await bob.agent.get('/account').expect(200);
    const id = appIdOn(page.text, 'Calendar &lt;sync&gt; &amp; &quot;co&quot;')!;
    const revoked = await bob.agent.post(`/account/apps/${id}/revoke`).type('form').send({ _csrf: csrfOf(page.text) }).expect(303);
    expect(revoked.headers.location).toBe('/account?done=app-revoked');

    await me(first.access_token).expect(401);
    await me(refreshed.access_token).expect(401);
    for (const token of [first.refresh_token, refreshed.refresh_token]) {
      expect((await refresh(app, token).expect(400)).body.error).toBe('invalid_grant');
    }
    expect((await exchange(app, pendingCode).expect(400)).body.error).toBe('invalid_grant');
    // another app of bob's, and another user's authorization of the same app, keep working
    await me(otherApp.access_token).expect(200);
    await me(devsOwn.access_token).expect(200);
    await refresh(other, otherApp.refresh_token).expect(200);

    const after = await bob.agent.get('/account?done=app-revoked').expect(200);
    expect(after.text).toContain("Access revoked: the application&#39;s tokens no longer work.");
    expect(appIdOn(after.text, 'Calendar &lt;sync&gt; &amp; &quot;co&quot;')).toBeNull();
    expect(appIdOn(after.text, 'Other app')).not.toBeNull();
  });

  it('refuses a revocation without the form token or from another site, and ends nothing', async () => {
    const pair = await tokens(bob, app);
    const page = await bob.agent.get('/account').expect(200);
    const id = appIdOn(page.text, 'Calendar &lt;sync&gt; &amp; &quot;co&quot;')!;
    await bob.agent.post(`/account/apps/${id}/revoke`).type('form').send({ _csrf: 'wrong' }).expect(403);
    for (const crossSite of [{ Origin: 'http://evil.example' }, { 'Sec-Fetch-Site': 'same-site' }]) {
      await bob.agent.post(`/account/apps/${id}/revoke`).set(crossSite).type('form').send({ _csrf: csrfOf(page.text) }).expect(403);
    }
    await me(pair.access_token).expect(200);
    // logged out: to the login page, nothing ended
    await request(t.app.getHttpServer()).post(`/account/apps/${id}/revoke`).type('form').send({}).expect(403);
    await me(pair.access_token).expect(200);
  });

  it('answers an app the user never authorized (or an id of none) as done, and a malformed id 404 (as an API key\'s)', async () => {
    const page = await dev.agent.get('/account').expect(200);
    const bobsOther = await tokens(bob, other);
    const otherId = appIdOn((await bob.agent.get('/account').expect(200)).text, 'Other app')!;
    // dev authorized only `app`: revoking `other` for dev ends nothing of bob's
    await dev.agent.post(`/account/apps/${otherId}/revoke`).type('form').send({ _csrf: csrfOf(page.text) }).expect(303);
    await dev.agent.post('/account/apps/999999/revoke').type('form').send({ _csrf: csrfOf(page.text) }).expect(303);
    await me(bobsOther.access_token).expect(200);
    const bad = await dev.agent.post('/account/apps/abc/revoke').type('form').send({ _csrf: csrfOf(page.text) }).expect(404);
    expect(bad.headers['content-type']).toBe('text/html; charset=utf-8');
    // GET of the form's target goes to the account page
    await dev.agent.get(`/account/apps/${otherId}/revoke`).expect(303).expect('Location', '/account');
  });
});

describe('account page: the password can be changed', () => {
  let t: TestApp;
  let address = 0;

  const server = () => t.app.getHttpServer();
  /** Each call comes from its own client address (X-Forwarded-For, trusted from loopback), so only the per-account limit counts. */
  const fresh = () => `10.7.${Math.floor(++address / 250)}.${address % 250}`;

  async function logIn(login: string, password: string): Promise<request.Response> {
    const form = await request(server()).get('/login').expect(200);
    return request(server())
      .post('/login')
      .set('X-Forwarded-For', fresh())
      .set('Cookie', (form.headers['set-cookie'] as unknown as string[])[0].split(';')[0])
      .type('form')
      .send({ _csrf: csrfOf(form.text), login, password });
  }
  async function session(login: string): Promise<string> {
    const res = await logIn(login, PASSWORD);
    expect(res.status).toBe(303);
    return sessionOf(res)!;
  }
  const account = (cookie: string) => request(server()).get('/account').set('Cookie', cookie);
  async function changePassword(cookie: string, current: string, next: string, headers: Record<string, string> = {}) {
    const page = await account(cookie).expect(200);
    return request(server())
      .post('/account/password')
      .set('Cookie', cookie)
      .set('X-Forwarded-For', fresh())
      .set(headers)
      .type('form')
      .send({ _csrf: csrfOf(page.text), current_password: current, new_password: next });
  }
  async function createUser(username: string): Promise<void> {
    const { IdentityAdminApi } = await import('../../../src/modules/identity/index.js');
    await t.app.get(IdentityAdminApi).createUser({ username, email: `${username}@example.test`, password: PASSWORD });
  }

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('changes it: every other session ends, this browser stays logged in (under a new cookie), the old password stops working', async () => {
    await createUser('carl');
    const here = await session('carl');
    const laptop = await session('carl');
    const phone = await session('carl');
    const key = /id="new-api-key">([^<]+)</.exec(
      (await request(server()).post('/account/api-keys').set('Cookie', laptop).type('form').send({ _csrf: csrfOf((await account(laptop)).text), name: 'ci' }).expect(201)).text,
    )![1];

    const changed = expectStatus(await changePassword(here, PASSWORD, NEW_PASSWORD), 303);
    expect(changed.headers.location).toBe('/account?done=password');
    const renewed = sessionOf(changed)!;
    expect(renewed).toMatch(/^cw_session=/);
    expect(renewed).not.toBe(here);

    const page = await request(server()).get(changed.headers.location as string).set('Cookie', renewed).expect(200);
    expect(page.text).toContain('Your password is changed. Every other browser logged in to your account is logged out; this one stays.');
    for (const ended of [laptop, phone, here]) await account(ended).expect(303).expect('Location', '/login?next=%2Faccount');

    expect((await logIn('carl', PASSWORD)).status).toBe(401);
    expect((await logIn('carl@example.test', NEW_PASSWORD)).status).toBe(303);
    // API keys are kept, as the page says
    await t.http.get(`${API}/me`).set('X-Api-Key', key).expect(200);
  });

  it('refuses a wrong current password as the login page does (401), and a new password sign-up would refuse (400): nothing changes', async () => {
    await createUser('dina');
    const here = await session('dina');
    const elsewhere = await session('dina');
    const wrong = expectStatus(await changePassword(here, 'not my password', NEW_PASSWORD), 401);
    expect(wrong.text).toContain('<p class="error" role="alert">Wrong current password.</p>');
    expect(sessionOf(wrong)).toBeUndefined();
    const short = expectStatus(await changePassword(here, PASSWORD, 'short'), 400);
    expect(short.text).toContain('The new password must be 8 to 1024 characters');
    const missing = expectStatus(await changePassword(here, PASSWORD, ''), 400);
    expect(missing.text).toContain('Change password');
    for (const cookie of [here, elsewhere]) await account(cookie).expect(200);
    expect((await logIn('dina', PASSWORD)).status).toBe(303);
    expect((await logIn('dina', NEW_PASSWORD)).status).toBe(401);
  });

  it('refuses a change without the form token, from another site, or logged out', async () => {
    await createUser('ezra');
    const here = await session('ezra');
    expectStatus(await changePassword(here, PASSWORD, NEW_PASSWORD, { Origin: 'http://evil.example' }), 403);
    expectStatus(await changePassword(here, PASSWORD, NEW_PASSWORD, { 'Sec-Fetch-Site': 'cross-site' }), 403);
    await request(server()).post('/account/password').set('Cookie', here).type('form').send({ _csrf: 'nope', current_password: PASSWORD, new_password: NEW_PASSWORD }).expect(403);
    await account(here).expect(200);
    expect((await logIn('ezra', PASSWORD)).status).toBe(303);
    await request(server()).get('/account/password').set('Cookie', here).expect(303).expect('Location', '/account');
  });


  it('counts wrong current passwords toward the login limit of the account: a stolen session cannot guess faster than the login page', async () => {
    await createUser('finn');
    await startOfAMinute();
    const stolen = await session('finn');
    // one login above counted already; each attempt comes from a new address
    let attempts = 1;
    let res = await changePassword(stolen, 'guess 0', NEW_PASSWORD);
    while (res.status === 401 && attempts < 45) res = await changePassword(stolen, `guess ${attempts++}`, NEW_PASSWORD);
    expect({ status: res.status, attempts }).toEqual({ status: 429, attempts: 20 });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.text).toContain('Too many login attempts');
    // even the right password waits, here and on the login page
    expectStatus(await changePassword(stolen, PASSWORD, NEW_PASSWORD), 429);
    expect((await logIn('finn', PASSWORD)).status).toBe(429);
    await account(stolen).expect(200);
  }, 60_000);
});
