import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { webUser, type WebUser } from '../../support/oauth-client.js';
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
});
