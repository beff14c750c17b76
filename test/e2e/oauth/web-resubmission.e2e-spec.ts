import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { csrfOf, PASSWORD, webUser, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { startOfAMinute } from '../../support/minute-windows.js';

/** The navigation of a logged-in user (the name may be wrapped for bidi isolation). */
const loggedInAs = (name: string) => new RegExp(`action="/logout"[^]*Log out (<bdi>)?${name}(</bdi>)?</button>`);
const cookieOf = (res: request.Response) => ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? []).map((c) => c.split(';')[0]);

/**
 * A form's answer reloaded, a button clicked twice, a form that expired, an
 * error met while logged in, pages over https: as a browser meets them.
 */
describe('web forms sent again, expired forms, error pages, HSTS', () => {
  let t: TestApp;
  let ann: WebUser;
  const db = () => t.app.get(DataSource);
  const keysOf = async (username: string) =>
    Number((await db().query(`SELECT count(*) AS n FROM identity.api_keys k JOIN identity.users u ON u.id = k.user_id WHERE u.username = $1`, [username]))[0].n);

  beforeAll(async () => {
    t = await createTestApp({ env: { API_KEYS_PER_USER_MAX: '3' } });
    ann = webUser(t);
    await ann.signUp('ann');
  });
  afterAll(() => t.close());

  describe('a form sent again does not act again', () => {
    it('creates one API key when its answer is reloaded, and says where it is', async () => {
      const page = await ann.agent.get('/account').expect(200);
      const before = await keysOf('ann');
      const form = { _csrf: csrfOf(page.text), name: 'reloaded' };
      const created = await ann.agent.post('/account/api-keys').type('form').send(form).expect(201);
      expect(created.text).toContain('id="new-api-key"');
      const again = await ann.agent.post('/account/api-keys').type('form').send(form).expect(303);
      expect(again.headers.location).toBe('/account?done=key-resent');
      expect(await keysOf('ann')).toBe(before + 1);
      const list = await ann.agent.get(again.headers.location as string).expect(200);
      expect(list.text).toContain('This form was already sent: the API key was created');
      expect(list.text).not.toContain('id="new-api-key"');
      // The answer's own form is a new submission: it creates another key.
      await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(created.text), name: 'next' }).expect(201);
      expect(await keysOf('ann')).toBe(before + 2);
      await db().query(`DELETE FROM identity.api_keys WHERE user_id = (SELECT id FROM identity.users WHERE username = 'ann')`);
    });

    it('creates one API key for a double click (both sent at once)', async () => {
      const page = await ann.agent.get('/account').expect(200);
      const form = { _csrf: csrfOf(page.text), name: 'double' };
      const answers = await Promise.all([1, 2].map(() => ann.agent.post('/account/api-keys').type('form').send(form)));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 303]);
      expect(await keysOf('ann')).toBe(1);
      await db().query(`DELETE FROM identity.api_keys WHERE user_id = (SELECT id FROM identity.users WHERE username = 'ann')`);
    });

    it('registers one application when its answer is reloaded', async () => {
      const dev = webUser(t);
      await dev.signUp('dev');
      const page = await dev.agent.get('/developer').expect(200);
      const form = { _csrf: csrfOf(page.text), name: 'Once', redirect_uris: 'https://app.example.test/cb', client_type: 'confidential' };
      await dev.agent.post('/developer/apps').type('form').send(form).expect(201);
      const again = await dev.agent.post('/developer/apps').type('form').send(form).expect(303);
      expect(again.headers.location).toBe('/developer?done=app-resent');
      const apps = await db().query(`SELECT 1 FROM identity.oauth_clients c JOIN identity.users u ON u.id = c.owner_id WHERE u.username = 'dev'`);
      expect(apps).toHaveLength(1);
      const list = await dev.agent.get(again.headers.location as string).expect(200);
      expect(list.text).toContain('This form was already sent: the application was registered');
    });

    it('keeps the secret a rotation showed when its answer is reloaded', async () => {
      const dev = webUser(t);
      await dev.signUp('rotor');
      await dev.registerApp(['https://app.example.test/cb']);
      const page = await dev.agent.get('/developer').expect(200);
      const id = /action="\/developer\/apps\/(\d+)\/rotate-secret"/.exec(page.text)![1];
      const secretHash = async () => (await db().query(`SELECT secret_hash FROM identity.oauth_clients WHERE id = $1`, [id]))[0].secret_hash as string;
      const form = { _csrf: csrfOf(page.text) };
      await dev.agent.post(`/developer/apps/${id}/rotate-secret`).type('form').send(form).expect(200);
      const shown = await secretHash();
      const again = await dev.agent.post(`/developer/apps/${id}/rotate-secret`).type('form').send(form).expect(303);
      expect(again.headers.location).toBe('/developer?done=secret-resent');
      expect(await secretHash()).toBe(shown);
    });

    it('a form refused as invalid may be sent again once fixed (the refusal used nothing)', async () => {
      const page = await ann.agent.get('/developer').expect(200);
      const form = { _csrf: csrfOf(page.text), name: 'Fixed', redirect_uris: 'not a uri', client_type: 'confidential' };
      await ann.agent.post('/developer/apps').type('form').send(form).expect(400);
      await ann.agent.post('/developer/apps').type('form').send({ ...form, redirect_uris: 'https://app.example.test/cb' }).expect(201);
    });
  });

  describe('a sign-up sent twice (the browser dropped the first answer)', () => {
    const signUpTwice = async (username: string, secondPassword: string) => {
      const form = await request(t.app.getHttpServer()).get('/signup').expect(200);
      const cookie = cookieOf(form).join('; ');
      const send = (password: string) =>
        request(t.app.getHttpServer())
          .post('/signup')
          .set('Cookie', cookie)
          .type('form')
          .send({ _csrf: csrfOf(form.text), username, email: `${username}@example.test`, password, next: '/developer' });
      await send(PASSWORD).expect(303);
      return send(secondPassword);
    };

    it('logs in as the account the first send created, and goes where it was going', async () => {
      const second = await signUpTwice('double', PASSWORD);
      expect(second.status).toBe(303);
      expect(second.headers.location).toBe('/developer');
      const session = cookieOf(second).find((c) => c.startsWith('cw_session='))!;
      const page = await request(t.app.getHttpServer()).get('/account').set('Cookie', session).expect(200);
      expect(page.text).toMatch(loggedInAs('double'));
    });

    it('is a 429 with Retry-After when the login it makes is over the login limit (as the login page answers)', async () => {
      const server = t.app.getHttpServer();
      const from = { 'X-Forwarded-For': '198.51.100.77' };
      const form = await request(server).get('/signup').expect(200);
      const cookie = cookieOf(form).join('; ');
      const send = () =>
        request(server).post('/signup').set(from).set('Cookie', cookie).type('form')
          .send({ _csrf: csrfOf(form.text), username: 'limited', email: 'limited@example.test', password: PASSWORD });
      await send().expect(303);
      const login = await request(server).get('/login').expect(200);
      // All 21 guesses in one minute's window: straddling two, neither was over the limit (a flake on a loaded machine).
      await startOfAMinute();
      for (let i = 0; i < 21; i++) {
        await request(server).post('/login').set(from).set('Cookie', cookieOf(login).join('; ')).type('form')
          .send({ _csrf: csrfOf(login.text), login: 'limited', password: 'not the password' });
      }
      const again = await send().expect(429);
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
      expect(again.text).toContain('Too many login attempts');
    });

    it('is still a 409 with another password', async () => {
      const second = await signUpTwice('double2', `${PASSWORD} but not`);
      expect(second.status).toBe(409);
      expect(cookieOf(second).some((c) => c.startsWith('cw_session='))).toBe(false);
    });

    it('both sent at once: one account, both answers log in', async () => {
      const form = await request(t.app.getHttpServer()).get('/signup').expect(200);
      const body = { _csrf: csrfOf(form.text), username: 'clicker', email: 'clicker@example.test', password: PASSWORD };
      const send = () => request(t.app.getHttpServer()).post('/signup').set('Cookie', cookieOf(form).join('; ')).type('form').send(body);
      const answers = await Promise.all([send(), send()]);
      expect(answers.map((a) => a.status)).toEqual([303, 303]);
      expect(answers.every((a) => cookieOf(a).some((c) => c.startsWith('cw_session=')))).toBe(true);
    });
  });

  describe('error pages', () => {
    it('show a logged-in user their navigation and a link back to the form\'s page', async () => {
      const dev = webUser(t);
      await dev.signUp('twice');
      await dev.registerApp(['https://app.example.test/cb']);
      const page = await dev.agent.get('/developer').expect(200);
      const id = /action="\/developer\/apps\/(\d+)\/delete"/.exec(page.text)![1];
      await dev.agent.post(`/developer/apps/${id}/delete`).type('form').send({ _csrf: csrfOf(page.text) }).expect(303);
      const gone = await dev.agent.post(`/developer/apps/${id}/delete`).type('form').send({ _csrf: csrfOf(page.text) }).expect(404);
      expect(gone.text).toMatch(loggedInAs('twice'));
      expect(gone.text).toContain('<a href="/developer">');
      const key = await dev.agent.post('/account/api-keys/999999/revoke').type('form').send({ _csrf: csrfOf(page.text) }).expect(404);
      expect(key.text).toMatch(loggedInAs('twice'));
      expect(key.text).toContain('<a href="/account">');
      const expired = await dev.agent.post('/account/api-keys').type('form').send({ _csrf: 'stale', name: 'x' }).expect(403);
      expect(expired.text).toMatch(loggedInAs('twice'));
      expect(expired.text).toContain('<a href="/account">');
      const put = await dev.agent.put('/account').expect(405);
      expect(put.text).toMatch(loggedInAs('twice'));
    });

    it('the key limit is the account page with the error at its top (409)', async () => {
      const full = webUser(t);
      await full.signUp('full');
      for (let i = 0; i < 3; i += 1) {
        const page = await full.agent.get('/account').expect(200);
        await full.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: `k${i}` }).expect(201);
      }
      const page = await full.agent.get('/account').expect(200);
      const refused = await full.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'one too many' }).expect(409);
      expect(refused.text).toMatch(/<h1>Account<\/h1><p class="error" role="alert">This user already holds 3 API keys/);
      expect(refused.text).toContain('action="/account/api-keys"');
      expect(await keysOf('full')).toBe(3);
    });
  });

  describe('an expired login or sign-up form', () => {
    it('is the login form again, with a fresh token that works', async () => {
      await request(t.app.getHttpServer()).get('/login').expect(200);
      const server = t.app.getHttpServer();
      const stale = await request(server).post('/login').type('form').send({ _csrf: 'A'.repeat(71), login: 'ann', password: PASSWORD, next: '/developer' }).expect(403);
      expect(stale.text).toContain('This form has expired');
      expect(stale.text).toContain('action="/login"');
      expect(stale.text).toContain('value="ann"');
      const retried = await request(server)
        .post('/login')
        .set('Cookie', cookieOf(stale).join('; '))
        .type('form')
        .send({ _csrf: csrfOf(stale.text), login: 'ann', password: PASSWORD, next: '/developer' })
        .expect(303);
      expect(retried.headers.location).toBe('/developer');
    });

    it('is the plain error page for a form posted from another origin (nothing of it filled into ours)', async () => {
      const crossSite = await request(t.app.getHttpServer())
        .post('/login')
        .set('Origin', 'http://elsewhere.example.test')
        .type('form')
        .send({ _csrf: 'A'.repeat(71), login: 'planted', password: PASSWORD })
        .expect(403);
      expect(crossSite.text).toContain('<h1>Form expired</h1>');
      expect(crossSite.text).not.toContain('planted');
    });

    it('is the sign-up form again, filled in but for the password', async () => {
      const stale = await request(t.app.getHttpServer())
        .post('/signup')
        .type('form')
        .send({ _csrf: 'stale', username: 'late', email: 'late@example.test', password: PASSWORD })
        .expect(403);
      expect(stale.text).toContain('action="/signup"');
      expect(stale.text).toContain('value="late@example.test"');
      expect(stale.text).not.toContain(PASSWORD);
      const cookie = cookieOf(stale).join('; ');
      await request(t.app.getHttpServer())
        .post('/signup')
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrfOf(stale.text), username: 'late', email: 'late@example.test', password: PASSWORD })
        .expect(303);
    });
  });

  describe('HSTS', () => {
    it('is sent on pages served over https through a trusted proxy, not over http', async () => {
      const https = await request(t.app.getHttpServer()).get('/login').set('X-Forwarded-Proto', 'https').expect(200);
      expect(https.headers['strict-transport-security']).toBe('max-age=31536000');
      const plain = await request(t.app.getHttpServer()).get('/login').expect(200);
      expect(plain.headers['strict-transport-security']).toBeUndefined();
      const missing = await request(t.app.getHttpServer()).get('/nowhere').set('X-Forwarded-Proto', 'https').expect(404);
      expect(missing.headers['strict-transport-security']).toBe('max-age=31536000');
    });

    it('is sent on every page when AUTH_URL is https', async () => {
      const secure = await createTestApp({ env: { AUTH_URL: 'https://auth.example.test' } });
      try {
        const page = await request(secure.app.getHttpServer()).get('/login').expect(200);
        expect(page.headers['strict-transport-security']).toBe('max-age=31536000');
      } finally {
        await secure.close();
      }
    });
  });
});
