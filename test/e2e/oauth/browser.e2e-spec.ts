import { createHash, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'correct horse battery staple';

/**
 * A small third-party web application on loopback, as a developer following
 * docs/OAUTH.md would write one: /start redirects to the authorization page
 * with state and PKCE; /callback checks the state, exchanges the code with its
 * client secret, and calls the API with the access token.
 */
class TestClient {
  clientId = '';
  clientSecret = '';
  /** What the callback obtained, for the test to inspect. */
  last: { accessToken?: string; me?: { username: string }; error?: string } = {};
  private readonly pending = new Map<string, string>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(private readonly authUrl: string) {}

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  get redirectUri(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callback`;
  }

  get startUrl(): string {
    return this.redirectUri.replace('/callback', '/start');
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.redirectUri);
    if (url.pathname === '/start') {
      const state = randomBytes(16).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      this.pending.set(state, verifier);
      const authorize = new URL('/oauth/authorize', this.authUrl);
      authorize.search = new URLSearchParams({
        response_type: 'code',
        client_id: this.clientId,
        redirect_uri: this.redirectUri,
        scope: 'read_user write_workspace',
        state,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      res.writeHead(302, { Location: authorize.toString() }).end();
      return;
    }
    const verifier = this.pending.get(url.searchParams.get('state') ?? '');
    if (url.pathname !== '/callback' || !verifier || !url.searchParams.get('code')) {
      this.last = { error: url.searchParams.get('error') ?? 'bad callback' };
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`refused: ${this.last.error}`);
      return;
    }
    const token = await fetch(new URL('/oauth/token', this.authUrl), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: url.searchParams.get('code')!, redirect_uri: this.redirectUri, code_verifier: verifier }),
    });
    const tokens = (await token.json()) as { access_token?: string; error?: string };
    if (!tokens.access_token) {
      this.last = { error: tokens.error };
      res.writeHead(502).end(`token exchange failed: ${tokens.error}`);
      return;
    }
    const me = await fetch(new URL('/api/1.0/me', this.authUrl), { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    this.last = { accessToken: tokens.access_token, me: (await me.json()) as { username: string } };
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<p id="who">Signed in as ${this.last.me!.username}</p>`);
  }
}

/** A browser context that reaches loopback only: any other host's request is blocked. */
async function loopbackContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext();
  await context.route('**/*', (route) =>
    new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient'),
  );
  return context;
}

describe('the whole flow in a real browser (Chromium, headless, loopback only)', () => {
  let t: TestApp;
  let authUrl: string;
  let browser: Browser;
  let page: Page;
  let client: TestClient;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    authUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    client = new TestClient(authUrl);
    await client.listen();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // No name resolution at all: the browser can only reach loopback addresses.
      args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
    });
    page = await (await loopbackContext(browser)).newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await t?.close();
  });

  it('signs up, creates an API key, registers an app, authorizes it, and the app calls the API', async () => {
    // sign-up (the first user: instance admin)
    await page.goto(`${authUrl}/signup`);
    await page.fill('input[name=username]', 'ann');
    await page.fill('input[name=email]', 'ann@example.test');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]:has-text("Create account")');
    await page.waitForURL(`${authUrl}/account`);
    expect(await page.textContent('main')).toContain('instance administrator');

    // an API key, shown once, that works on the API
    await page.fill('input[name=name]', 'laptop');
    await page.click('button:has-text("Create API key")');
    const apiKey = (await page.textContent('#new-api-key'))!.trim();
    expect(apiKey).toMatch(/^cwk_/);
    const me = await fetch(`${authUrl}/api/1.0/me`, { headers: { 'X-Api-Key': apiKey } });
    expect(((await me.json()) as { username: string }).username).toBe('ann');
    await page.goto(`${authUrl}/account`);
    expect(await page.textContent('table')).toContain(apiKey.slice(0, 12));
    expect(await page.content()).not.toContain(apiKey);

    // register the test client
    await page.goto(`${authUrl}/developer`);
    await page.fill('input[name=name]', 'Loopback Test Client');
    await page.fill('textarea[name=redirect_uris]', client.redirectUri);
    await page.check('input[value=confidential]');
    await page.click('button:has-text("Register")');
    client.clientId = (await page.textContent('#client-id'))!.trim();
    client.clientSecret = (await page.textContent('#client-secret'))!.trim();
    expect(client.clientSecret).toMatch(/^cws_/);

    // the authorization flow, started by the application
    await page.goto(client.startUrl);
    await page.waitForURL(/\/oauth\/authorize\?/);
    expect(await page.textContent('#app-name')).toBe('Loopback Test Client');
    expect(await page.textContent('#scopes')).toContain('write_workspace');
    await page.click('button:has-text("Approve")');
    await page.waitForURL(/\/callback\?/);
    expect(await page.textContent('#who')).toBe('Signed in as ann');

    // the application's token calls the API within its scopes
    const bearer = { Authorization: `Bearer ${client.last.accessToken}` };
    const org = await fetch(`${authUrl}/api/1.0/organizations`, { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: '{"name":"From the app"}' });
    expect(org.status).toBe(201);
    const keys = await fetch(`${authUrl}/api/1.0/me/api-keys`, { headers: bearer });
    expect(keys.status).toBe(403);
  });

  it('shows an error page, never a redirect, for a redirect URI the app did not register', async () => {
    const evil = new URL('/oauth/authorize', authUrl);
    evil.search = new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: `${client.redirectUri}/`, scope: 'read_user' }).toString();
    const response = await page.goto(evil.toString());
    expect(response!.status()).toBe(400);
    expect(page.url()).toBe(evil.toString());
    expect(await page.textContent('.error')).toMatch(/redirect_uri/);
  });

  it('answers a denial with access_denied on the redirect URI', async () => {
    await page.goto(client.startUrl);
    await page.click('button:has-text("Deny")');
    await page.waitForURL(/\/callback\?/);
    expect(client.last.error).toBe('access_denied');
  });

  // Each of two first views set its own pre-session secret under one cookie
  // name, the last answer's replacing the other's: the first tab's form was
  // refused "Form expired" (403).
  it('logs in from the first of two tabs opened together on a first visit', async () => {
    const context = await loopbackContext(browser);
    // Both requests are held until both are on their way, then sent from here at once (route.fetch, with the
    // context's cookies as they are then: none), so neither carries a cookie the other's answer set. Let go to
    // the browser's own network stack, the later one at times left after the earlier answer and carried it.
    let release!: () => void;
    const bothSent = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    await context.route(/\/(login|signup)$/, async (route) => {
      if (++held === 2) release();
      await bothSent;
      await route.fulfill({ response: await route.fetch() });
    });
    const [login, signup] = await Promise.all([context.newPage(), context.newPage()]);
    await Promise.all([login.goto(`${authUrl}/login`), signup.goto(`${authUrl}/signup`)]);
    await context.unrouteAll();
    // Both views were first views: each set a pre-session secret, and the browser kept both.
    const preSession = async () => (await context.cookies()).filter((c) => c.name.startsWith('cw_csrf_'));
    expect(await preSession()).toHaveLength(2);
    await login.fill('input[name=login]', 'ann');
    await login.fill('input[name=password]', PASSWORD);
    const [response] = await Promise.all([
      login.waitForResponse((r) => r.url() === `${authUrl}/login` && r.request().method() === 'POST'),
      login.click('button:has-text("Log in")'),
    ]);
    expect(response.status()).toBe(303);
    await login.waitForURL(`${authUrl}/account`);
    expect(await login.textContent('h1')).toBe('Account');
    // The login cleared both (its forms use the session's token now): they do not pile up.
    expect(await preSession()).toEqual([]);
    await context.close();
  });

  /**
   * Login CSRF from a page of the same site on another port: cookies ignore
   * ports, so that page can plant a pre-session cookie of its choosing and
   * post the form token that goes with it, with the attacker's credentials.
   * SameSite=Lax lets a same-site post carry the cookie. It logged the
   * browser into the attacker's account; a form from another origin is now
   * refused whatever its token.
   */
  it('refuses a login form posted from another origin of the same site, even with a token for a cookie that page planted', async () => {
    // The attacker's account: ann's, made by the first test.
    const secret = 'planted-by-the-attacker';
    const token = 'AAAAAAAAAAAA' + createHmac('sha256', secret).update('cardwork csrf').digest('base64url');
    const attacker = http.createServer((_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html>
        <script>document.cookie = "cw_csrf_AAAAAAAAAAAA=${secret}; path=/";</script>
        <form id="f" method="post" action="${authUrl}/login">
          <input name="login" value="ann"><input name="password" value="${PASSWORD}">
          <input name="_csrf" value="${token}"><input name="next" value="/account">
        </form>
        <script>document.getElementById('f').submit();</script>`),
    );
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const victim = await loopbackContext(browser);
    try {
      const page = await victim.newPage();
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${authUrl}/login` && r.request().method() === 'POST'),
        page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`),
      ]);
      expect(response.status()).toBe(403);
      await page.waitForLoadState();
      expect(await page.textContent('h1')).toBe('Form expired');
      expect((await victim.cookies()).map((c) => c.name)).not.toContain('cw_session');
    } finally {
      await victim.close();
      await new Promise((resolve) => attacker.close(resolve));
    }
  });

  // Refused by the body limit before the page's code runs: the browser showed problem+json as raw text.
  it('shows the error page for a form over 1 MiB, in the site\'s look', async () => {
    const fresh = await (await loopbackContext(browser)).newPage();
    await fresh.goto(`${authUrl}/login`);
    // A pasted value the field does not cap; set directly, as typing a megabyte would take minutes.
    await fresh.$eval('input[name=login]', (input, size) => void ((input as unknown as { value: string }).value = 'a'.repeat(size)), 1024 * 1024);
    await fresh.fill('input[name=password]', PASSWORD);
    const [response] = await Promise.all([
      fresh.waitForResponse((r) => r.url() === `${authUrl}/login` && r.request().method() === 'POST'),
      fresh.click('button:has-text("Log in")'),
    ]);
    expect({ status: response.status(), type: response.headers()['content-type'] }).toEqual({ status: 413, type: 'text/html; charset=utf-8' });
    await fresh.waitForLoadState();
    expect(await fresh.textContent('h1')).toBe('Payload Too Large');
    expect(await fresh.textContent('.error')).toBe('Request body is larger than 1048576 bytes');
    // the site's stylesheet applies, as on every page
    expect(await fresh.$eval('link[rel=stylesheet]', (link) => (link as unknown as { sheet: object | null }).sheet !== null)).toBe(true);
    await fresh.context().close();
  });
});
