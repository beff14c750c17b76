import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CHROMIUM = '/usr/bin/chromium';
const PASSWORD = 'correct horse battery staple';
/** The application's redirect URI: answered by the browser context's route below, so no server listens there. */
const CALLBACK = 'http://127.0.0.1:9/callback';

describe('revoking an application on the account page, in a real browser (Chromium, headless, loopback only)', () => {
  let t: TestApp;
  let authUrl: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    authUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'] });
    const context = await browser.newContext();
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.href.startsWith(CALLBACK)) return route.fulfill({ status: 200, contentType: 'text/plain', body: 'callback' });
      return url.hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient');
    });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const token = (fields: Record<string, string>, clientId: string, secret: string) =>
    fetch(`${authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
      body: new URLSearchParams(fields),
    });

  it('the user clicks "Revoke access" and the application\'s tokens stop working', async () => {
    await page.goto(`${authUrl}/signup`);
    await page.fill('input[name=username]', 'ann');
    await page.fill('input[name=email]', 'ann@example.test');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button:has-text("Create account")');
    await page.waitForURL(`${authUrl}/account`);
    expect(await page.textContent('main')).toContain('No application has access to your account.');

    await page.goto(`${authUrl}/developer`);
    await page.fill('input[name=name]', 'Photo <Printer>');
    await page.fill('textarea[name=redirect_uris]', CALLBACK);
    await page.click('button:has-text("Register")');
    const clientId = (await page.textContent('#client-id'))!.trim();
    const secret = (await page.textContent('#client-secret'))!.trim();

    const authorize = new URL('/oauth/authorize', authUrl);
    authorize.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CALLBACK, scope: 'read_user' }).toString();
    await page.goto(authorize.href);
    await page.click('button:has-text("Approve")');
    await page.waitForURL(/\/callback\?/);
    const code = new URL(page.url()).searchParams.get('code')!;
    const pair = (await (await token({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, clientId, secret)).json()) as {
      access_token: string;
      refresh_token: string;
    };
    const me = () => fetch(`${authUrl}/api/1.0/me`, { headers: { Authorization: `Bearer ${pair.access_token}` } });
    expect((await me()).status).toBe(200);

    await page.goto(`${authUrl}/account`);
    const row = page.locator('#authorized-apps tr', { hasText: 'Photo <Printer>' });
    expect(await row.textContent()).toContain('read_user');
    await row.locator('button:has-text("Revoke access")').click();
    await page.waitForURL(`${authUrl}/account?done=app-revoked`);
    expect(await page.textContent('.notice')).toBe("Access revoked: the application's tokens no longer work.");
    expect(await page.textContent('main')).toContain('No application has access to your account.');

    expect((await me()).status).toBe(401);
    const refused = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token }, clientId, secret);
    expect({ status: refused.status, body: await refused.json() }).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
