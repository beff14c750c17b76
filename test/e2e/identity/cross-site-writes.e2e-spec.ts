import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

const CHROMIUM = '/usr/bin/chromium';
/** Another site than the API's 127.0.0.1: an IP address is a site of its own. */
const ATTACKER_HOST = '127.0.0.2';

/**
 * A 401 asks for Basic credentials, so a user who opens an API URL in a
 * browser may type the key into its prompt; the browser then sends it with
 * every request to the API's origin, also those another site's page makes.
 * The API takes form-encoded bodies, which any page can post without a CORS
 * preflight: before this, such a page could make its visitor's team take
 * anybody as admin. Writes that a browser says come from another site (Fetch
 * Metadata, or an Origin that is not the service's) are refused with 403.
 */
describe('writes sent from another site', () => {
  let t: TestApp;
  let ann: TestUser;
  let eve: TestUser;
  let org: number;
  let apiUrl: string;

  const members = async () => (await t.http.get(`${API}/organizations/${org}/members`).set(as(ann)).expect(200)).body;
  const basic = () => ({ Authorization: `Basic ${Buffer.from(`${ann.apiKey}:`).toString('base64')}` });
  const addEve = (headers: Record<string, string>) =>
    t.http.post(`${API}/organizations/${org}/members`).set({ ...basic(), ...headers }).type('form').send({ user: `@${eve.username}`, role: 'admin' });

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    apiUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    ann = await t.user();
    eve = await t.user();
    org = await workspaceClient(t).team(ann);
  });
  afterAll(() => t.close());

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'Sec-Fetch-Site': 'same-site' }],
    ['a foreign Origin (a browser without Fetch Metadata)', { Origin: 'https://attacker.example' }],
    ['Origin: null (a sandboxed frame or a local file)', { Origin: 'null' }],
  ])('refuses a write with %s, and changes nothing', async (_label, headers) => {
    const before = await members();
    const res = await addEve(headers);
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.detail).toBe('A browser sent this request from another site; the API takes no writes from other sites');
    expect(await members()).toEqual(before);
  });

  it('refuses every unsafe method, whatever the credential', async () => {
    const cross = { 'Sec-Fetch-Site': 'cross-site' };
    await t.http.put(`${API}/organizations/${org}/members/${ann.id}`).set({ ...as(ann), ...cross }).send({ role: 'member' }).expect(403);
    const project = await workspaceClient(t).project(ann, org);
    await t.http.delete(`${API}/projects/${project.id}`).set({ ...as(ann), ...cross }).expect(403);
    await t.http.get(`${API}/projects/${project.id}`).set(as(ann)).expect(200);
    await t.http.post(`${API}/organizations`).set(cross).send({ name: 'x' }).expect(403);
  });

  it('still answers reads from another site (a link), and writes from the same origin, a typed URL or a non-browser client', async () => {
    await t.http.get(`${API}/organizations/${org}`).set({ ...basic(), 'Sec-Fetch-Site': 'cross-site', Origin: 'https://attacker.example' }).expect(200);
    for (const headers of [{ 'Sec-Fetch-Site': 'same-origin', Origin: apiUrl }, { 'Sec-Fetch-Site': 'none' }, { Origin: apiUrl }, { Origin: t.config.authUrl }, {}]) {
      const user = await t.user();
      const res = await t.http.post(`${API}/organizations/${org}/members`).set({ ...basic(), ...headers }).type('form').send({ user: `@${user.username}`, role: 'viewer' });
      expect({ headers, status: res.status }).toEqual({ headers, status: 201 });
    }
  });

  describe('in a real browser (Chromium, headless)', () => {
    let browser: Browser;
    let attacker: http.Server;
    let target: number;

    beforeAll(async () => {
      target = await workspaceClient(t).team(ann, 'Browser target');
      attacker = http.createServer((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end(`<form id="f" method="post" action="${apiUrl}${API}/organizations/${target}/members">
<input name="user" value="@${eve.username}"><input name="role" value="admin"></form>
<script>document.getElementById('f').submit()</script>`);
      });
      await new Promise<void>((resolve) => attacker.listen(0, ATTACKER_HOST, resolve));
      // No name resolution at all: the browser reaches the two loopback addresses only.
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE ${ATTACKER_HOST}`] });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => attacker?.close(resolve));
    });

    it("a page of another site cannot use the key the browser remembers for the API", async () => {
      // No request routing: it would hide the headers the network layer adds (the remembered credentials).
      const context = await browser.newContext();
      const page = await context.newPage();
      // The user once gave the key to the browser for the API's origin (as at a Basic prompt).
      const visit = new URL(`${apiUrl}${API}/me`);
      visit.username = ann.apiKey;
      expect((await page.goto(visit.toString()))!.status()).toBe(200);

      const posted = page.waitForResponse((r) => r.request().method() === 'POST');
      await page.goto(`http://${ATTACKER_HOST}:${(attacker.address() as AddressInfo).port}/`);
      const answer = await posted;
      expect((await answer.request().allHeaders()).authorization).toMatch(/^Basic /);
      expect(answer.status()).toBe(403);
      const after = (await t.http.get(`${API}/organizations/${target}/members`).set(as(ann)).expect(200)).body;
      expect(after.map((m: { username: string }) => m.username)).toEqual([ann.username]);
      await context.close();
    });
  });
});
