import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { appWithWebUser, csrfOf, hiddenFields, PASSWORD, pkce, webUser, type WebUser } from '../../support/oauth-client.js';
import { rawExchange, type RawResponse } from '../../support/raw-http.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const API = '/api/1.0';

const unescapeHtml = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'");

describe('web pages on AUTH_URL', () => {
  let t: TestApp;
  let ann: WebUser;

  beforeAll(async () => ({ t, ann } = await appWithWebUser()));
  afterAll(() => t.close());

  it('serves plain HTML forms with a CSRF field, no script, and strict headers', async () => {
    const res = await webUser(t).agent.get('/signup').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).not.toMatch(/<script/i);
    expect(csrfOf(res.text)).toMatch(/^[\w-]{40,}$/);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['set-cookie']?.[0]).toMatch(/^cw_csrf_[\w-]{12}=[\w-]+; Path=\/; HttpOnly; SameSite=Lax$/);
  });

  it('makes the first user to sign up the instance admin, and nobody after', async () => {
    const db = t.app.get(DataSource);
    const admins = await db.query(`SELECT username FROM identity.users WHERE is_admin ORDER BY id`);
    expect(admins).toEqual([{ username: 'ann' }]);
    await webUser(t).signUp('bob');
    expect(await db.query(`SELECT username FROM identity.users WHERE is_admin`)).toEqual([{ username: 'ann' }]);
  });

  it('stores sessions in the database, hashed, and ends them on logout', async () => {
    const cara = webUser(t);
    await cara.signUp('cara');
    const account = await cara.agent.get('/account').expect(200);
    expect(account.text).toContain('cara');
    const rows = await t.app.get(DataSource).query(`SELECT s.token_hash FROM web.sessions s JOIN identity.users u ON u.id = s.user_id WHERE u.username = 'cara'`);
    expect(rows).toHaveLength(1);
    await cara.agent.post('/logout').type('form').send({ _csrf: csrfOf(account.text) }).expect(303).expect('Location', '/login');
    await cara.agent.get('/account').expect(303).expect('Location', '/login?next=%2Faccount');
    expect(await t.app.get(DataSource).query(`SELECT 1 FROM web.sessions s JOIN identity.users u ON u.id = s.user_id WHERE u.username = 'cara'`)).toEqual([]);
  });

  // Logging in again in the same browser used to leave its earlier session
  // working: a session cookie copied (or planted) before stayed good for a week.
  it('rotates the session on login: the browser\'s previous session stops working, logout ends the new one', async () => {
    const { IdentityAdminApi } = await import('../../../src/modules/identity/index.js');
    await t.app.get(IdentityAdminApi).createUser({ username: 'erin', email: 'erin@example.test', password: PASSWORD });
    const server = t.app.getHttpServer();
    const sessionOf = (res: request.Response) =>
      (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('cw_session='))!.split(';')[0];
    const logIn = async (cookie: string, page: string) =>
      sessionOf(await request(server).post('/login').set('Cookie', cookie).type('form').send({ _csrf: csrfOf(page), login: 'erin', password: PASSWORD }).expect(303));
    const account = (cookie: string) => request(server).get('/account').set('Cookie', cookie);

    const form = await request(server).get('/login').expect(200);
    const first = await logIn((form.headers['set-cookie'] as unknown as string[])[0].split(';')[0], form.text);
    const page = await account(first).expect(200);
    const second = await logIn(first, page.text);
    expect(second).not.toBe(first);
    await account(first).expect(303).expect('Location', '/login?next=%2Faccount');
    const current = await account(second).expect(200);
    const rows = `SELECT 1 FROM web.sessions s JOIN identity.users u ON u.id = s.user_id WHERE u.username = 'erin'`;
    expect(await t.app.get(DataSource).query(rows)).toHaveLength(1);
    await request(server).post('/logout').set('Cookie', second).type('form').send({ _csrf: csrfOf(current.text) }).expect(303);
    await account(second).expect(303);
    expect(await t.app.get(DataSource).query(rows)).toEqual([]);
  });

  it('logs in by user name or email, refuses a wrong password, and never redirects off the site', async () => {
    const browser = webUser(t);
    const form = await browser.agent.get('/login').expect(200);
    const wrong = await browser.agent.post('/login').type('form').send({ _csrf: csrfOf(form.text), login: 'ann', password: 'nope nope nope' }).expect(401);
    expect(wrong.text).toContain('Wrong user name, email or password');
    await browser.agent
      .post('/login')
      .type('form')
      .send({ _csrf: csrfOf(form.text), login: 'ANN@example.test', password: PASSWORD, next: '//evil.example/x' })
      .expect(303)
      .expect('Location', '/account');
    await browser.agent.get('/account').expect(200);
  });

  // The sign-up links were fixed, so a new user sent to log in by an
  // application lost the authorization: after sign-up they landed on /account.
  it('keeps `next` on the links between login and sign-up: a new user from an application reaches its consent page', async () => {
    const app = await ann.registerApp(['https://app.example.test/cb'], 'public', 'Next App');
    const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: 'https://app.example.test/cb', scope: 'read_user', state: 's&t', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    const authorize = `/oauth/authorize?${query}`;
    const newcomer = webUser(t);
    const toLogin = await newcomer.agent.get(authorize).expect(303);
    expect(toLogin.headers.location).toBe(`/login?next=${encodeURIComponent(authorize)}`);
    const login = await newcomer.agent.get(toLogin.headers.location as string).expect(200);
    const withNext = (path: string) => `${path}?next=${encodeURIComponent(authorize)}`;
    const links = (page: string, text: string) => [...page.matchAll(new RegExp(`<a href="([^"]*)">${text}</a>`, 'g'))].map((m) => unescapeHtml(m[1]));
    // the nav's link and the form's, each carrying next
    expect(links(login.text, 'Sign up')).toEqual([withNext('/signup'), withNext('/signup')]);
    expect(links(login.text, 'Log in')).toEqual([withNext('/login')]);
    const signUp = await newcomer.agent.get(links(login.text, 'Sign up')[1]).expect(200);
    expect(links(signUp.text, 'Log in')).toEqual([withNext('/login'), withNext('/login')]);
    expect(hiddenFields(signUp.text).next).toBe(authorize);
    const created = await newcomer.agent
      .post('/signup')
      .type('form')
      .send({ ...hiddenFields(signUp.text), username: 'newcomer', email: 'newcomer@example.test', password: PASSWORD })
      .expect(303);
    expect(created.headers.location).toBe(authorize);
    const consent = await newcomer.agent.get(authorize).expect(200);
    expect(consent.text).toContain('<strong id="app-name">Next App</strong>');
    // Logged in now, the sign-up link of an old tab goes on to next too.
    await newcomer.agent.get(withNext('/signup')).expect(303).expect('Location', authorize);

    // A next off this site is dropped from the links, as the login drops it.
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const page = await webUser(t).agent.get(`/login?next=${encodeURIComponent(next)}`).expect(200);
      expect(links(page.text, 'Sign up')).toEqual(['/signup', '/signup']);
    }
  });

  // A page's path with a method no route of it takes got Nest's 404 in the
  // API's problem+json ("Cannot GET /account/api-keys"), and a path that is
  // neither a page nor the API got Express's bare "Cannot GET" page.
  it('sends GET of a form\'s target to its page, answers other methods 405 with Allow, unknown paths 404, all as HTML pages', async () => {
    const redirects: Array<[string, string]> = [
      ['/account/api-keys', '/account'],
      ['/Account/API-keys/', '/account'],
      ['/account/api-keys/1/revoke', '/account'],
      ['/developer/apps', '/developer'],
      ['/developer/apps/7/rotate-secret', '/developer'],
      ['/developer/apps/7/delete', '/developer'],
      ['/logout', '/'],
    ];
    for (const [path, page] of redirects) {
      for (const method of ['get', 'head'] as const) {
        const res = await ann.agent[method](path);
        expect({ method, path, status: res.status, location: res.headers.location }).toEqual({ method, path, status: 303, location: page });
      }
    }
    // Pressing Enter on /account/api-keys after creating a key lands on the list, logged in.
    const list = await ann.agent.get('/account/api-keys').redirects(1).expect(200);
    expect(list.text).toContain('<h2>API keys</h2>');

    const refused: Array<[string, string, string, string]> = [
      ['put', '/login', 'GET, HEAD, POST', '/login'],
      ['options', '/login', 'GET, HEAD, POST', '/login'],
      ['delete', '/account', 'GET, HEAD', '/account'],
      ['put', '/account/api-keys', 'POST', '/account'],
      ['delete', '/account/api-keys/1/revoke', 'POST', '/account'],
      ['patch', '/developer/apps/7/delete', 'POST', '/developer'],
      ['options', '/logout', 'POST', '/'],
      ['put', '/oauth/authorize', 'GET, HEAD, POST', '/oauth/authorize'],
    ];
    for (const [method, path, allow, page] of refused) {
      const res = await ann.agent[method as 'put'](path);
      expect({ method, path, status: res.status, allow: res.headers.allow, type: res.headers['content-type'] }).toEqual({ method, path, status: 405, allow, type: 'text/html; charset=utf-8' });
      expect(res.text).toContain('<h1>Method Not Allowed</h1>');
      expect(res.text).toContain(`<a href="${page}">`);
    }
    // Nothing was revoked or logged out.
    await ann.agent.get('/account').expect(200);

    for (const path of ['/favicon.ico', '/nonexistent', '/account/api-keys/1', '/oauth/token/x', '/api/1.0x']) {
      const res = await ann.agent.get(path).set('Accept', 'text/html,*/*');
      expect({ path, status: res.status, type: res.headers['content-type'] }).toEqual({ path, status: 404, type: 'text/html; charset=utf-8' });
      expect(res.text).toContain('<h1>Not Found</h1>');
      expect(res.text).not.toContain('<pre>');
    }
    // A client asking for JSON gets the API's problem+json, as the API answers an unknown path.
    const json = await t.http.get('/nonexistent').set('Accept', 'application/json').expect(404);
    expect(json.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(json.body).toMatchObject({ type: 'HTTP.404', status: 404, detail: 'Cannot GET /nonexistent' });
    // The API and the token endpoint keep their own answers.
    const api = await t.http.get(`${API}/nonexistent`).expect(404);
    expect(api.body).toMatchObject({ type: 'HTTP.404', detail: `Cannot GET ${API}/nonexistent` });
    const token = await t.http.get('/oauth/token').expect(405).expect('Allow', 'POST');
    expect(token.body.error).toBe('invalid_request');
  });

  // Refused by the app-wide middleware before any page's code runs, these
  // were answered in the API's problem+json, which a browser shows as raw JSON.
  it('answers text with NUL or not UTF-8 (query or form) with the HTML error page, status 400', async () => {
    const page = await ann.agent.get('/account').expect(200);
    const csrf = encodeURIComponent(csrfOf(page.text));
    const gets = ['/login?next=%00', '/login?next=%FF', '/account?x=%ED%A0%80', '/oauth/authorize?state=a%00b', '/oauth/authorize?client_id=%C0%80', '/account/api-keys/5/revoke/?q=%FF'];
    const posts: Array<[string, string]> = [
      ['/login', `_csrf=${csrf}&login=ann%00&password=x`],
      ['/login', `_csrf=${csrf}&login=%FF&password=x`],
      ['/signup', `_csrf=${csrf}&username=%E9t%E9`],
      ['/oauth/authorize', `_csrf=${csrf}&state=%00&decision=approve`],
      ['/developer/apps', `_csrf=${csrf}&name=%FE`],
      ['/logout', `_csrf=${csrf}&x=%00`],
    ];
    const answers = [
      ...(await Promise.all(gets.map(async (url) => [url, await ann.agent.get(url)] as const))),
      ...(await Promise.all(posts.map(async ([url, body]) => [url, await ann.agent.post(url).type('form').send(body)] as const))),
    ];
    for (const [url, res] of answers) {
      expect({ url, status: res.status, type: res.headers['content-type'], csp: res.headers['content-security-policy'] }).toEqual({
        url,
        status: 400,
        type: 'text/html; charset=utf-8',
        csp: expect.stringMatching(/default-src 'none'/),
      });
      expect(res.text).toMatch(/<p class="error" role="alert">[^<]*(NUL|UTF-8)/);
    }
    // Still logged in: the refused logout did not run.
    await ann.agent.get('/account').expect(200);
    // The API and the token endpoints keep their own forms.
    const api = await t.http.get(`${API}/me?x=%FF`).expect(400);
    expect(api.headers['content-type']).toMatch(/^application\/problem\+json/);
    const token = await t.http.post('/oauth/token').type('form').send('grant_type=refresh_token&refresh_token=%FF').expect(400);
    expect(token.body.error).toBe('invalid_request');
  });

  // Refused by the body limit before any page's code runs, these were
  // answered in the API's problem+json too.
  it('answers a form body over 1 MiB with the HTML error page, status 413, declared or chunked, read or not', async () => {
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const MiB = 1024 * 1024;
    const head = (path: string, type: string, framing: string) =>
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\n${framing}\r\n`;
    const data = Buffer.alloc(64 * 1024, 0x61);
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const pages = ['/login', '/signup', '/logout', '/oauth/authorize', '/developer/apps', '/account/api-keys', '/account/api-keys/5/revoke', '/developer/apps/7/delete/'];
    const answers: Array<[string, RawResponse | undefined]> = [];
    for (const path of pages) {
      // the head alone, declaring the length: answered before any of the body is sent
      answers.push([`${path} declared`, (await rawExchange(port, head(path, 'application/x-www-form-urlencoded', `Content-Length: ${MiB + 1}\r\n`))).response]);
      answers.push([`${path} chunked`, (await rawExchange(port, head(path, 'application/x-www-form-urlencoded', 'Transfer-Encoding: chunked\r\n'), { chunk, times: 40 })).response]);
    }
    answers.push(['/login JSON', (await rawExchange(port, head('/login', 'application/json', `Content-Length: ${MiB + 1}\r\n`))).response]);
    for (const [what, res] of answers) {
      expect({ what, status: res?.status, type: res?.headers['content-type'], csp: res?.headers['content-security-policy'], connection: res?.headers.connection }).toEqual({
        what,
        status: 413,
        type: 'text/html; charset=utf-8',
        csp: expect.stringMatching(/default-src 'none'/),
        connection: 'close',
      });
      expect({ what, page: res!.body }).toEqual({ what, page: expect.stringMatching(/<h1>Payload Too Large<\/h1>.*<p class="error" role="alert">Request body is larger than 1048576 bytes<\/p>/s) });
    }
    // A browser's form sent whole, as it is: it reads the page.
    const page = await ann.agent.get('/account').expect(200);
    const big = await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'x'.repeat(MiB) });
    expect({ status: big.status, type: big.headers['content-type'] }).toEqual({ status: 413, type: 'text/html; charset=utf-8' });
    expect(big.text).toContain('Request body is larger than 1048576 bytes');
    expect((await ann.agent.get('/account').expect(200)).text).not.toContain('x'.repeat(100));
    // The API and the token endpoints keep their own forms.
    const api = (await rawExchange(port, head(`${API}/organizations`, 'application/json', `Content-Length: ${MiB + 1}\r\n`))).response;
    expect({ status: api?.status, type: api?.headers['content-type'] }).toEqual({ status: 413, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(JSON.parse(api!.body).type).toBe('INPUT.TOO_LARGE');
    const token = (await rawExchange(port, head('/oauth/token', 'application/x-www-form-urlencoded', `Content-Length: ${MiB + 1}\r\n`))).response;
    expect({ status: token?.status, error: token && JSON.parse(token.body).error }).toEqual({ status: 413, error: 'invalid_request' });
  });

  it('refuses a form without the right CSRF field, and changes nothing', async () => {
    const page = await ann.agent.get('/account').expect(200);
    const keysBefore = (await ann.agent.get('/account')).text.match(/Revoke/g)?.length ?? 0;
    const forged = await ann.agent.post('/account/api-keys').type('form').send({ name: 'forged' }).expect(403);
    expect(forged.text).toContain('Form expired');
    await ann.agent.post('/account/api-keys').type('form').send({ name: 'forged', _csrf: `${csrfOf(page.text)}x` }).expect(403);
    // a character of more than one byte in the token's place (its UTF-16 length right, its bytes not): 403, never 500
    const token = csrfOf(page.text);
    await ann.agent.post('/account/api-keys').type('form').send({ name: 'forged', _csrf: `é${token.slice(1)}` }).expect(403);
    await ann.agent.post('/logout').type('form').send({ _csrf: `${token.slice(0, 12)}é${token.slice(13)}` }).expect(403);
    // a token from another visitor's cookie does not fit this session
    const other = await webUser(t).agent.get('/login');
    await ann.agent.post('/account/api-keys').type('form').send({ name: 'forged', _csrf: csrfOf(other.text) }).expect(403);
    const after = await ann.agent.get('/account');
    expect(after.text.match(/Revoke/g)?.length ?? 0).toBe(keysBefore);
    expect(after.text).not.toContain('forged');
  });

  // Each page view without the pre-session cookie set a new secret under one
  // cookie name, so of two tabs opened on a first visit only the last
  // answered kept a form that worked: the other's was "Form expired".
  it('keeps the forms of pages opened together on a first visit working, and each bound to this browser', async () => {
    const server = t.app.getHttpServer();
    const [login, signup] = await Promise.all([request(server).get('/login').expect(200), request(server).get('/signup').expect(200)]);
    // The browser's cookie jar after both answers, in either order: a cookie of the same name replaces the earlier one.
    const jar = new Map<string, string>();
    for (const res of [login, signup]) {
      for (const cookie of res.headers['set-cookie'] as unknown as string[]) {
        const [pair] = cookie.split(';');
        jar.set(pair.slice(0, pair.indexOf('=')), pair);
      }
    }
    const cookie = [...jar.values()].join('; ');
    const post = (path: string, csrf: string, fields: Record<string, string>, cookies = cookie) =>
      request(server).post(path).set('Cookie', cookies).type('form').send({ _csrf: csrf, ...fields });
    // Another browser's forms, and a token that pairs one of this browser's ids with another's secret, are refused.
    const other = await request(server).get('/login').expect(200);
    await post('/login', csrfOf(other.text), { login: 'ann', password: PASSWORD }).expect(403);
    await post('/login', csrfOf(login.text).slice(0, 12) + csrfOf(other.text).slice(12), { login: 'ann', password: PASSWORD }).expect(403);
    await post('/login', csrfOf(login.text), { login: 'ann', password: PASSWORD }, (other.headers['set-cookie'] as unknown as string[])[0].split(';')[0]).expect(403);
    // Both of this browser's forms work.
    await post('/signup', csrfOf(signup.text), { username: 'two-tabs', email: 'two-tabs@example.test', password: 'short' }).expect(400);
    await post('/login', csrfOf(login.text), { login: 'ann', password: PASSWORD }).expect(303).expect('Location', '/account');
  });

  // Each first view sets a pre-session cookie of its own; they outlived the
  // login and piled up in the browser, each sent with every request.
  it('clears every pre-session cookie the browser sent once it logs in or signs up, and no other', async () => {
    const server = t.app.getHttpServer();
    const setCookies = (res: request.Response) => (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
    const firstViews = async () => {
      const views = await Promise.all([request(server).get('/login').expect(200), request(server).get('/signup').expect(200)]);
      const pairs = views.map((v) => setCookies(v)[0].split(';')[0]);
      return { csrf: views.map((v) => csrfOf(v.text)), names: pairs.map((p) => p.slice(0, p.indexOf('='))), cookie: [...pairs, 'other=kept'].join('; ') };
    };
    const expectCleared = (res: request.Response, names: string[]) => {
      const cleared = setCookies(res).filter((c) => !c.startsWith('cw_session='));
      expect(cleared.map((c) => c.slice(0, c.indexOf('='))).sort()).toEqual([...names].sort());
      for (const c of cleared) expect(c).toMatch(/^cw_csrf_[\w-]{12}=; Max-Age=0; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
    };

    const login = await firstViews();
    expect(login.names).toHaveLength(2);
    const post = (path: string, cookie: string, fields: Record<string, string>) => request(server).post(path).set('Cookie', cookie).type('form').send(fields);
    // A refused login keeps them: its page's form still needs one.
    expect(setCookies(await post('/login', login.cookie, { _csrf: login.csrf[0], login: 'ann', password: 'wrong password' }).expect(401))).toEqual([]);
    const loggedIn = await post('/login', login.cookie, { _csrf: login.csrf[0], login: 'ann', password: PASSWORD }).expect(303);
    expectCleared(loggedIn, login.names);
    const session = setCookies(loggedIn).find((c) => c.startsWith('cw_session='))!.split(';')[0];
    await request(server).get('/account').set('Cookie', session).expect(200);

    const signUp = await firstViews();
    const signedUp = await post('/signup', signUp.cookie, { _csrf: signUp.csrf[1], username: 'cookie-jar', email: 'cookie-jar@example.test', password: PASSWORD }).expect(303);
    expectCleared(signedUp, signUp.names);
  });

  it('creates an API key shown once, lists it by prefix and last use, and revokes it', async () => {
    const page = await ann.agent.get('/account').expect(200);
    const created = await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'laptop' }).expect(201);
    const key = /id="new-api-key">([^<]+)</.exec(created.text)![1];
    expect(key).toMatch(/^cwk_/);
    await t.http.get(`${API}/me`).set('X-Api-Key', key).expect(200);
    const listed = await ann.agent.get('/account').expect(200);
    expect(listed.text).not.toContain(key);
    expect(listed.text).toContain(`${key.slice(0, 12)}…`);
    const row = /<tr><td>laptop<\/td>[\s\S]*?<\/tr>/.exec(listed.text)![0];
    expect(row).toContain(`${key.slice(0, 12)}…`);
    expect(row).not.toContain('never');
    const id = (await t.http.get(`${API}/me/api-keys`).set('X-Api-Key', key).expect(200)).body.find((k: { name: string }) => k.name === 'laptop').id;
    await ann.agent.post(`/account/api-keys/${id}/revoke`).type('form').send({ _csrf: csrfOf(listed.text) }).expect(303);
    await t.http.get(`${API}/me`).set('X-Api-Key', key).expect(401);
  });

  it('registers applications (secret shown once), refuses bad redirect URIs, rotates secrets and deletes apps', async () => {
    const app = await ann.registerApp(['https://app.example.test/cb', 'com.example.app:/cb', 'http://localhost:8080/cb']);
    expect(app.clientId).toMatch(/^cwc_/);
    expect(app.clientSecret).toMatch(/^cws_/);
    const page = await ann.agent.get('/developer').expect(200);
    expect(page.text).toContain(app.clientId);
    expect(page.text).not.toContain(app.clientSecret!);

    for (const uri of ['http://app.example.test/cb', 'https://app.example.test/cb#frag', 'javascript:alert(1)', 'not a uri']) {
      const bad = await ann.agent.post('/developer/apps').type('form').send({ _csrf: csrfOf(page.text), name: 'Bad', redirect_uris: uri, client_type: 'confidential' }).expect(400);
      expect(bad.text).toContain('class="error"');
    }
    // The type is one of the form's two, never taken for confidential (nor a missing one).
    for (const clientType of ['bogus', '', 'Public', '__proto__', 'toString']) {
      const bad = await ann.agent.post('/developer/apps').type('form').send({ _csrf: csrfOf(page.text), name: 'Typo', redirect_uris: 'https://app.example.test/cb', client_type: clientType }).expect(400);
      expect(bad.text).toContain('class="error"');
      expect(bad.text).toContain('Type must be confidential or public');
      expect(bad.text).toContain('value="Typo"');
    }
    expect((await ann.agent.get('/developer').expect(200)).text).not.toContain('Typo');

    const appId = /action="\/developer\/apps\/(\d+)\/rotate-secret"/.exec(page.text)![1];
    const rotated = await ann.agent.post(`/developer/apps/${appId}/rotate-secret`).type('form').send({ _csrf: csrfOf(page.text) }).expect(200);
    const secret = /id="client-secret">([^<]+)</.exec(rotated.text)![1];
    expect(secret).not.toBe(app.clientSecret);
    const revokeWith = (s: string) => t.http.post('/oauth/revoke').type('form').auth(app.clientId, s).send({ token: 'cwa_x' });
    await revokeWith(app.clientSecret!).expect(401);
    await revokeWith(secret).expect(200);

    // another user can neither rotate nor delete it
    const bob = webUser(t);
    await bob.signUp('bob2');
    const bobPage = await bob.agent.get('/developer').expect(200);
    await bob.agent.post(`/developer/apps/${appId}/delete`).type('form').send({ _csrf: csrfOf(bobPage.text) }).expect(404);

    await ann.agent.post(`/developer/apps/${appId}/delete`).type('form').send({ _csrf: csrfOf(page.text) }).expect(303);
    expect((await ann.agent.get('/developer')).text).not.toContain(app.clientId);
    await revokeWith(secret).expect(401);
  });
});

describe('web pages behind https, with sign-up closed', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { ALLOW_SIGNUP: 'false', AUTH_URL: 'https://auth.example.test' } });
  });
  afterAll(() => t.close());

  it('refuses sign-up', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const page = await agent.get('/signup').expect(403);
    expect(page.text).toContain('Sign-up is closed');
    const login = await agent.get('/login').expect(200);
    await agent.post('/signup').type('form').send({ _csrf: csrfOf(login.text), username: 'eve', email: 'eve@example.test', password: PASSWORD }).expect(403);
    expect(await t.app.get(DataSource).query(`SELECT 1 FROM identity.users`)).toEqual([]);
  });

  // The closed page's links dropped `next`: a user sent by an application's
  // authorization request who tried sign-up lost the way back to consent.
  it('keeps a safe `next` on the closed sign-up page\'s links, shown or posted', async () => {
    const next = '/oauth/authorize?response_type=code&client_id=cwc_x&state=a%26b';
    const withNext = (path: string) => `${path}?next=${encodeURIComponent(next)}`;
    const links = (page: string, text: string) => [...page.matchAll(new RegExp(`<a href="([^"]*)">${text}</a>`, 'g'))].map((m) => unescapeHtml(m[1]));
    const shown = await request(t.app.getHttpServer()).get(withNext('/signup')).expect(403);
    expect(shown.text).toContain('Sign-up is closed');
    // the nav's two links and the page's own login link
    expect(links(shown.text, 'Log in')).toEqual([withNext('/login'), withNext('/login')]);
    expect(links(shown.text, 'Sign up')).toEqual([withNext('/signup')]);

    const form = await request(t.app.getHttpServer()).get('/login').expect(200);
    const cookie = (form.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const post = (fields: Record<string, string>) =>
      request(t.app.getHttpServer()).post('/signup').set('Cookie', cookie).type('form').send({ _csrf: csrfOf(form.text), username: 'eve', email: 'eve@example.test', password: PASSWORD, ...fields });
    const posted = await post({ next }).expect(403);
    expect(posted.text).toContain('Sign-up is closed');
    expect(links(posted.text, 'Log in')).toEqual([withNext('/login'), withNext('/login')]);

    // A next off this site is dropped, as the login drops it.
    for (const unsafe of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const page = await request(t.app.getHttpServer()).get(`/signup?next=${encodeURIComponent(unsafe)}`).expect(403);
      expect(links(page.text, 'Log in')).toEqual(['/login', '/login']);
      expect(links((await post({ next: unsafe }).expect(403)).text, 'Log in')).toEqual(['/login', '/login']);
    }
    expect(await t.app.get(DataSource).query(`SELECT 1 FROM identity.users`)).toEqual([]);
  });

  it('sets Secure __Host- cookies', async () => {
    const res = await request(t.app.getHttpServer()).get('/login').expect(200);
    expect(res.headers['set-cookie']?.[0]).toMatch(/^__Host-cw_csrf_[\w-]{12}=[\w-]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('logs in a user made by the CLI with a password, with a Secure session cookie', async () => {
    const { IdentityAdminApi } = await import('../../../src/modules/identity/index.js');
    await t.app.get(IdentityAdminApi).createUser({ username: 'dan', email: 'dan@example.test', password: PASSWORD });
    const agent = request.agent(t.app.getHttpServer());
    const form = await agent.get('/login').set('X-Forwarded-Proto', 'https').expect(200);
    const cookie = (form.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const res = await request(t.app.getHttpServer())
      .post('/login')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrfOf(form.text), login: 'dan', password: PASSWORD })
      .expect(303);
    expect((res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('__Host-cw_session='))).toMatch(/; Secure; SameSite=Lax$/);
    // The pre-session cookie is cleared as it was set: __Host-, Secure, Path=/.
    expect((res.headers['set-cookie'] as unknown as string[]).filter((c) => c.includes('cw_csrf_'))).toEqual([
      expect.stringMatching(new RegExp(`^${cookie.slice(0, cookie.indexOf('='))}=; Max-Age=0; Path=/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$`)),
    ]);
  });

  // Last in this app: it exhausts the login attempts of the test's address.
  it('limits password guesses: past 20 in a minute even the right password waits (429, Retry-After)', async () => {
    const form = await request(t.app.getHttpServer()).get('/login').expect(200);
    // a Secure cookie, which the test agent would not send back over plain http
    const cookie = (form.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const attempt = (password: string) =>
      request(t.app.getHttpServer()).post('/login').set('Cookie', cookie).type('form').send({ _csrf: csrfOf(form.text), login: 'dan', password });
    // Fixed one-minute windows: the limit bites within 20 guesses, or 40 when a window ends meanwhile.
    let refused = 0;
    for (let i = 0; i < 41 && refused === 0; i++) {
      const res = await attempt(`wrong guess ${i}`);
      if (res.status === 429) refused = i + 1;
      else expect(res.status).toBe(401);
    }
    expect(refused).toBeGreaterThanOrEqual(19);
    const limited = await attempt(PASSWORD).expect(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many login attempts');
  });
});
