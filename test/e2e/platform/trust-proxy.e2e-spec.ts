import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { awayFromWindowEdge } from '../../support/clock-edges.js';
import { csrfOf } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * TRUST_PROXY says whose X-Forwarded-For names the client (the address the
 * login limit of 20 guesses a minute counts), and whose X-Forwarded-Proto
 * counts. The tests connect from loopback: a setting that trusts it gives each
 * forwarded client its own counter; one that does not (a proxy on a Docker
 * bridge network, say) ignores the headers, so the connection's address counts.
 * It was `loopback` whatever the setting.
 */
describe('TRUST_PROXY', () => {
  const apps: TestApp[] = [];
  afterAll(() => Promise.all(apps.map((t) => t.close())));

  async function app(trustProxy: string): Promise<TestApp> {
    const t = await createTestApp({ env: { TRUST_PROXY: trustProxy } });
    apps.push(t);
    return t;
  }

  /** A login page's cookie and form token, and the name of that cookie. */
  async function loginForm(t: TestApp, headers: Record<string, string> = {}) {
    const page = await request(t.app.getHttpServer()).get('/login').set(headers).expect(200);
    const cookie = (page.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    return { cookie, name: cookie.split('=')[0], csrf: csrfOf(page.text) };
  }

  /**
   * 20 wrong guesses forwarded for one client (each for another login, so no
   * account's counter fills), then one forwarded for another client: the
   * statuses of the first client's 21st guess and of the other client's.
   */
  async function guessesOfTwoClients(t: TestApp, forwarded: (client: number, guess: number) => string): Promise<number[]> {
    const form = await loginForm(t);
    let guesses = 0;
    const guess = (client: number, login: string) =>
      request(t.app.getHttpServer())
        .post('/login')
        .set('Cookie', form.cookie)
        .set('X-Forwarded-For', forwarded(client, ++guesses))
        .type('form')
        .send({ _csrf: form.csrf, login, password: 'wrong guess' });
    await awayFromWindowEdge();
    for (let i = 0; i < 20; i++) await guess(1, `nobody${i}`).expect(401);
    return [(await guess(1, 'nobody20')).status, (await guess(2, 'somebody')).status];
  }

  let trusting: TestApp;
  let distrusting: TestApp;
  beforeAll(async () => {
    trusting = await app('127.0.0.1/8, ::1');
    distrusting = await app('false');
  });

  it("with the proxy's addresses listed, two forwarded clients have a login counter each", async () => {
    expect(await guessesOfTwoClients(trusting, (client) => `203.0.113.${client}`)).toEqual([429, 401]);
  }, 60_000);

  it('with false, X-Forwarded-For is ignored: every client shares the connection address', async () => {
    expect(await guessesOfTwoClients(distrusting, (client) => `203.0.113.${client}`)).toEqual([429, 429]);
  }, 60_000);

  it('with a hop count, the address the last proxy saw counts, not what the client put before it', async () => {
    const oneHop = await app('1');
    // The first client makes up an X-Forwarded-For per guess, which the proxy appends its address to.
    // Addresses of their own: on the embedded database the file's apps share the login counters.
    const made = (client: number, guess: number) => (client === 1 ? `198.51.100.${guess}, 203.0.113.11` : '203.0.113.12');
    expect(await guessesOfTwoClients(oneHop, made)).toEqual([429, 401]);
  }, 60_000);

  it('X-Forwarded-Proto counts only from a trusted proxy: a page over https through it gets __Host- cookies', async () => {
    const https = { 'X-Forwarded-Proto': 'https' };
    expect((await loginForm(trusting, https)).name).toMatch(/^__Host-/);
    expect((await loginForm(distrusting, https)).name).not.toMatch(/^__Host-/);
  });
});
