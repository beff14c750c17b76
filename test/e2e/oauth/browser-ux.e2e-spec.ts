import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { csrfOf, webUser, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CHROMIUM = '/usr/bin/chromium';
const CALLBACK = 'https://app.example.test/callback';

/**
 * Where Chromium draws each character of the first text node of `selector`
 * that holds `word`, left to right on screen: the word's letters in the order
 * the reader sees them.
 */
function drawnOrder(page: Page, selector: string, word: string): Promise<string> {
  return page.$eval(
    selector,
    (element, w) => {
      const walker = element.ownerDocument.createTreeWalker(element, 4);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf(w);
        if (at < 0) continue;
        const letters = [...w].map((letter, i) => {
          const range = element.ownerDocument.createRange();
          range.setStart(node, at + i);
          range.setEnd(node, at + i + 1);
          return { letter, x: range.getBoundingClientRect().left };
        });
        return letters.sort((a, b) => a.x - b.x).map((l) => l.letter).join('');
      }
      return '';
    },
    word,
  );
}

describe('web pages in a real browser: names, small screens (Chromium, headless, loopback only)', () => {
  let t: TestApp;
  let authUrl: string;
  let browser: Browser;
  let page: Page;
  let ann: WebUser;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    authUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    ann = webUser(t);
    await ann.signUp('ann');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'] });
    const context = await browser.newContext({ viewport: { width: 375, height: 667 } });
    await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient')));
    // The browser logs in as ann: her session cookie, from the supertest agent's sign-up.
    const session = ann.agent.jar.getCookie('cw_session', { domain: '127.0.0.1', path: '/', secure: false, script: false })!;
    await context.addCookies([{ name: 'cw_session', value: session.value, url: authUrl }]);
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const consentUrl = (clientId: string) => {
    const url = new URL('/oauth/authorize', authUrl);
    url.search = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CALLBACK, scope: 'read_user' }).toString();
    return url.href;
  };

  // "Photo Printer" + U+202E drew the rest of the platform's sentence backwards ("ot elba eb lliw tI").
  it('keeps the consent page\'s own words in order around a stored name with a right-to-left override', async () => {
    const app = await ann.registerApp([CALLBACK], 'confidential', 'Photo Printer');
    await t.app.get(DataSource).query(`UPDATE identity.oauth_clients SET name = $1 WHERE client_id = $2`, ['Photo Printer\u202E', app.clientId]);
    await page.goto(consentUrl(app.clientId));
    expect(await page.textContent('#app-name')).toBe('Photo Printer\u202E');
    expect(await drawnOrder(page, 'main p', 'asks to act')).toBe('asks to act');
    expect(await drawnOrder(page, '#scopes', 'your user name')).toBe('your user name');
  });

  // At 375 px the logged-in header was 438 px wide (Log out cut off), the key table 470 px, and long names,
  // redirect URIs and 404 paths did not wrap (pages up to 2104 px wide).
  describe('fits a 375 px wide screen', () => {
    const width = () => page.$eval('html', (root) => (root as unknown as { scrollWidth: number }).scrollWidth);

    it('the account page with API keys, long names included', async () => {
      for (const name of ['laptop', 'k'.repeat(200)]) {
        const form = await ann.agent.get('/account').expect(200);
        await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(form.text), name }).expect(201);
      }
      await page.goto(`${authUrl}/account`);
      expect(await page.locator('tbody tr').count()).toBe(2);
      expect(await width()).toBeLessThanOrEqual(375);
      expect(await page.locator('header button').isVisible()).toBe(true);
      const button = await page.locator('header button').boundingBox();
      expect(button!.x + button!.width).toBeLessThanOrEqual(375);
    });

    it('the developer page with an app whose redirect URI and name are long', async () => {
      await ann.registerApp([`https://app.example.test/${'c'.repeat(400)}`], 'confidential', 'N'.repeat(100));
      await page.goto(`${authUrl}/developer`);
      expect(await width()).toBeLessThanOrEqual(375);
    });

    it('the consent page of an app with a 100-character name', async () => {
      const app = await ann.registerApp([`${CALLBACK}/${'d'.repeat(300)}`], 'confidential', 'W'.repeat(100));
      const url = new URL(consentUrl(app.clientId));
      url.searchParams.set('redirect_uri', `${CALLBACK}/${'d'.repeat(300)}`);
      await page.goto(url.href);
      expect(await page.textContent('#app-name')).toBe('W'.repeat(100));
      expect(await width()).toBeLessThanOrEqual(375);
    });

    it('the 404 page of a long path', async () => {
      const response = await page.goto(`${authUrl}/nosuchpage${'x'.repeat(400)}`);
      expect(response!.status()).toBe(404);
      expect(await width()).toBeLessThanOrEqual(375);
    });
  });

  // An axe audit: "Revoke", "Rotate secret" and "Delete" repeated per row with the same name (WCAG 2.4.6), an
  // empty actions header, no skip link nor current-page link, a /favicon.ico 404 on every visit, and an app
  // (with all its users' tokens) deleted by one click.
  describe('accessibility', () => {
    let bea: WebUser;
    let beaPage: Page;

    /**
     * A page of a new browser context logged in as `user`. `javaScriptEnabled`
     * false turns scripts off; `routed` false leaves out the route that aborts
     * other hosts (Playwright's routing also stops Chromium's own /favicon.ico
     * request); the host resolver rules keep it on loopback anyway.
     */
    async function browserOf(user: WebUser, { javaScriptEnabled = true, routed = true } = {}): Promise<Page> {
      const context = await browser.newContext({ javaScriptEnabled });
      if (routed) await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient')));
      const session = user.agent.jar.getCookie('cw_session', { domain: '127.0.0.1', path: '/', secure: false, script: false })!;
      await context.addCookies([{ name: 'cw_session', value: session.value, url: authUrl }]);
      return context.newPage();
    }

    beforeAll(async () => {
      bea = webUser(t);
      await bea.signUp('bea');
      for (const name of ['laptop', 'phone']) {
        const form = await bea.agent.get('/account').expect(200);
        await bea.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(form.text), name }).expect(201);
      }
      for (const name of ['Photo Printer', 'Backup Bot']) {
        const app = await bea.registerApp([CALLBACK], 'confidential', name);
        await bea.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'read_user' });
      }
      beaPage = await browserOf(bea);
    }, 60_000);

    it('names each row\'s button by its item, and the actions column', async () => {
      await beaPage.goto(`${authUrl}/account`);
      for (const name of ['Revoke key laptop', 'Revoke key phone', 'Revoke access for Photo Printer', 'Revoke access for Backup Bot']) {
        expect(await beaPage.getByRole('button', { name, exact: true }).count()).toBe(1);
      }
      expect(await beaPage.getByRole('columnheader', { name: 'Actions', exact: true }).count()).toBe(2);
      await beaPage.goto(`${authUrl}/developer`);
      for (const name of ['Rotate secret of Photo Printer', 'Rotate secret of Backup Bot']) {
        expect(await beaPage.getByRole('button', { name, exact: true }).count()).toBe(1);
      }
    });

    it('deletes an app only from its confirmation, which works without JavaScript and says what goes', async () => {
      const page = await browserOf(bea, { javaScriptEnabled: false });
      await page.goto(`${authUrl}/developer`);
      const confirm = page.getByRole('button', { name: 'Delete Photo Printer and all its tokens', exact: true });
      expect(await confirm.isVisible()).toBe(false);
      await page.getByText('Delete Photo Printer…').click();
      expect(await confirm.isVisible()).toBe(true);
      await confirm.click();
      await page.waitForURL(`${authUrl}/developer`);
      expect(await page.locator('section.app h3').allTextContents()).toEqual(['Backup Bot']);
      await page.context().close();
    });

    it('starts with a skip link to the main content and marks the current page in the navigation', async () => {
      await beaPage.goto(`${authUrl}/developer`);
      await beaPage.keyboard.press('Tab');
      expect(await beaPage.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent)).toBe('Skip to main content');
      await beaPage.keyboard.press('Enter');
      expect(new URL(beaPage.url()).hash).toBe('#main');
      expect(await beaPage.getByRole('link', { name: 'Developer' }).getAttribute('aria-current')).toBe('page');
      expect(await beaPage.getByRole('link', { name: 'Account' }).getAttribute('aria-current')).toBeNull();
    });

    // The browser asks for the icon itself, not the page: Playwright's request events miss it, the server sees it.
    it('asks for no /favicon.ico and breaks no content security rule', async () => {
      const page = await browserOf(bea, { routed: false });
      const asked: string[] = [];
      const errors: string[] = [];
      const server = t.app.getHttpServer() as Server;
      const listen = (request: IncomingMessage) => asked.push(request.url!);
      server.on('request', listen);
      page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
      await page.goto(`${authUrl}/account`);
      await page.waitForTimeout(1000);
      server.off('request', listen);
      expect(asked).toContain('/account');
      expect(asked).not.toContain('/favicon.ico');
      expect(errors).toEqual([]);
      await page.context().close();
    });
  });
});
