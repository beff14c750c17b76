import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { csrfOf, PASSWORD } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { startOfAMinute } from '../../support/minute-windows.js';

/**
 * The per-account login limit counts the account a login resolves to. It was
 * keyed on the text typed, so a user name and an email were two counters: 20
 * guesses a minute by name and 20 more by email. Every attempt here comes
 * from its own address (X-Forwarded-For, trusted from loopback), so only the
 * per-account counter can refuse.
 */
describe('login attempts are limited per account, by whichever name', () => {
  let t: TestApp;
  let form: { cookie: string; csrf: string };
  let address = 0;

  beforeAll(async () => {
    t = await createTestApp();
    const { IdentityAdminApi } = await import('../../../src/modules/identity/index.js');
    await t.app.get(IdentityAdminApi).createUser({ username: 'gail', email: 'gail@example.test', password: PASSWORD });
    const page = await request(t.app.getHttpServer()).get('/login').expect(200);
    form = { cookie: (page.headers['set-cookie'] as unknown as string[])[0].split(';')[0], csrf: csrfOf(page.text) };
  });
  afterAll(() => t.close());

  const attempt = (login: string, password = 'wrong guess') =>
    request(t.app.getHttpServer())
      .post('/login')
      .set('Cookie', form.cookie)
      .set('X-Forwarded-For', `10.9.${Math.floor(++address / 250)}.${address % 250}`)
      .type('form')
      .send({ _csrf: form.csrf, login, password });


  /** Alternates the logins given until the first 429; returns how many attempts that took. */
  async function attemptsUntilRefused(logins: string[]): Promise<number> {
    for (let i = 0; i < 45; i++) {
      const res = await attempt(logins[i % logins.length]);
      if (res.status === 429) return i + 1;
      expect({ status: res.status, text: res.text.includes('Wrong user name, email or password.') }).toEqual({ status: 401, text: true });
    }
    return Infinity;
  }

  it('counts the user name and the email of one account together: the 21st guess is refused, even the right password', async () => {
    await startOfAMinute();
    expect(await attemptsUntilRefused(['gail', 'GAIL@example.test', ' Gail '])).toBe(21);
    const limited = await attempt('gail@example.test', PASSWORD).expect(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many login attempts');
  }, 60_000);

  it('counts an unknown login by its text, in any case: refused as a known one is', async () => {
    await startOfAMinute();
    expect(await attemptsUntilRefused(['nobody', 'NOBODY', ' Nobody '])).toBe(21);
    // another unknown name is counted apart
    await attempt('somebody else').expect(401);
  }, 60_000);
});
