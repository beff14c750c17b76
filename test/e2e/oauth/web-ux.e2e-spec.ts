import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { appWithWebUser, csrfOf, PASSWORD, webUser, type WebUser } from '../../support/oauth-client.js';
import type { TestApp } from '../../support/test-app.js';

const API = '/api/1.0';

describe('web pages: names that could disguise themselves or the page', () => {
  let t: TestApp;
  let ann: WebUser;

  beforeAll(async () => ({ t, ann } = await appWithWebUser()));
  afterAll(() => t.close());

  const register = async (name: string) => {
    const page = await ann.agent.get('/developer').expect(200);
    return ann.agent
      .post('/developer/apps')
      .type('form')
      .send({ _csrf: csrfOf(page.text), name, redirect_uris: 'https://app.example.test/cb', client_type: 'confidential' });
  };

  // "Photo Printer" + U+202E turned the consent page's own sentence after the name backwards.
  it.each([
    ['a right-to-left override', 'Photo Printer\u202E'],
    ['a left-to-right isolate', 'Photo \u2066Printer'],
    ['an Arabic letter mark', 'Photo\u061C Printer'],
    ['a zero-width space', 'Photo\u200BPrinter'],
    ['a zero-width joiner', 'Pho\u200Dto'],
    ['a byte order mark inside', 'Pho\uFEFFto'],
    ['a soft hyphen', 'Pho\u00ADto'],
    ['a line separator', 'Photo\u2028Printer'],
    ['a combining grapheme joiner', 'Photo\u034FPrinter'],
    ['a Hangul filler (draws as nothing)', '\u3164'],
    ['only braille pattern blanks (draw as spaces, not trimmed)', '\u2800\u2800'],
  ])('refuses an application name with %s, with the page\'s error, and registers nothing', async (_what, name) => {
    const res = await register(name);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/<p class="error" role="alert">[^<]*must not contain invisible, control or text-direction characters/);
    const list = await ann.agent.get('/developer').expect(200);
    expect(list.text).toContain('No applications yet.');
  });

  it('still takes names in any script, right-to-left ones included', async () => {
    for (const name of ['מדפסת תמונות', 'Imprimante photo é', '写真プリンター 🖨️', 'I \u2764\uFE0F prints']) expect((await register(name)).status).toBe(201);
  });

  it('refuses an API key name with such characters, on the account page and on the API', async () => {
    const page = await ann.agent.get('/account').expect(200);
    const web = await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'laptop\u202Egnp.exe' });
    expect(web.status).toBe(400);
    expect(web.text).toMatch(/<p class="error" role="alert">[^<]*must not contain invisible, control or text-direction characters/);
    const created = await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'laptop' }).expect(201);
    const apiKey = /id="new-api-key">([^<]+)</.exec(created.text)![1];
    const api = await t.http.post(`${API}/me/api-keys`).set('X-Api-Key', apiKey).send({ name: 'ci\u200Bbot' });
    expect({ status: api.status, type: api.body.type }).toEqual({ status: 400, type: 'IDENTITY.INVALID_USER' });
    const listed = await t.http.get(`${API}/me/api-keys`).set('X-Api-Key', apiKey).expect(200);
    expect(listed.body.map((k: { name: string }) => k.name)).toEqual(['laptop']);
  });

  it('refuses such a display name when the CLI creates a user', async () => {
    const { IdentityAdminApi } = await import('../../../src/modules/identity/index.js');
    const create = t.app.get(IdentityAdminApi).createUser({ username: 'dora', email: 'dora@example.test', displayName: 'Dora\u202E' });
    await expect(create).rejects.toMatchObject({ kind: 'invalid', errors: [{ field: 'display_name' }] });
  });

  // A name stored before the check: shown isolated, so it cannot reorder the words around it.
  it('shows a stored name inside <bdi> on the consent and developer pages', async () => {
    const app = await ann.registerApp(['https://old.example.test/cb'], 'confidential', 'Old Name');
    await t.app.get(DataSource).query(`UPDATE identity.oauth_clients SET name = $1 WHERE client_id = $2`, ['Old\u202E Name', app.clientId]);
    const consent = await ann.authorize({ response_type: 'code', client_id: app.clientId, redirect_uri: 'https://old.example.test/cb', scope: 'read_user' }).expect(200);
    expect(consent.text).toContain('<bdi><strong id="app-name">Old\u202E Name</strong></bdi> asks to act as <strong><bdi>ann</bdi></strong>');
    expect((await ann.agent.get('/developer').expect(200)).text).toContain('<h3><bdi>Old\u202E Name</bdi></h3>');
  });
});

describe('the consent page says where the user will be sent', () => {
  let t: TestApp;
  let ann: WebUser;

  beforeAll(async () => ({ t, ann } = await appWithWebUser()));
  afterAll(() => t.close());

  it.each([
    ['an https URI with a port', 'https://app.example.test:8443/oauth/cb?tenant=7', 'https://app.example.test:8443'],
    ['a loopback URI', 'http://127.0.0.1:9/callback', 'http://127.0.0.1:9'],
    ['a native app\'s private scheme', 'com.example.app:/oauth2redirect', 'com.example.app:'],
  ])('shows the origin, the full redirect URI and the client id, for %s', async (_what, uri, origin) => {
    const app = await ann.registerApp([uri], 'public', 'Where To');
    const consent = await ann
      .authorize({ response_type: 'code', client_id: app.clientId, redirect_uri: uri, scope: 'read_user', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })
      .expect(200);
    expect(consent.text).toContain(`<strong id="redirect-origin" class="wrap destination">${origin}</strong>`);
    expect(consent.text).toContain(`<code id="redirect-uri" class="wrap">${uri}</code>`);
    expect(consent.text).toContain(`<code id="client-id" class="wrap">${app.clientId}</code>`);
  });
});

// NIST SP 800-63B §5.1.1.2: 12345678, password and aaaaaaaa were accepted.
describe('passwords an attacker guesses first are refused', () => {
  let t: TestApp;

  beforeAll(async () => ({ t } = await appWithWebUser()));
  afterAll(() => t.close());

  it.each([
    ['12345678', 'is one of the most commonly used passwords'],
    ['password', 'is one of the most commonly used passwords'],
    ['Passw0rd', 'is one of the most commonly used passwords'],
    ['aaaaaaaa', 'is one character repeated'],
    ['😀😀😀😀😀😀😀😀', 'is one character repeated'],
    ['gusgusgus', 'must not be your user name or email address'],
    ['GUS@example.test', 'must not be your user name or email address'],
  ])('sign-up refuses %s with a 400 that says why', async (password, why) => {
    const gus = webUser(t);
    const form = await gus.agent.get('/signup').expect(200);
    const res = await gus.agent
      .post('/signup')
      .type('form')
      .send({ _csrf: csrfOf(form.text), username: 'gusgusgus', email: 'gus@example.test', password })
      .expect(400);
    expect(res.text).toContain(`<p class="error" role="alert">password ${why}`);
    expect(await t.app.get(DataSource).query(`SELECT 1 FROM identity.users WHERE username = 'gusgusgus'`)).toEqual([]);
  });

  it('the CLI\'s user create refuses them too, and takes a passphrase', async () => {
    const { IdentityAdminApi } = await import('../../../src/modules/identity/index.js');
    const admin = t.app.get(IdentityAdminApi);
    await expect(admin.createUser({ username: 'hal', email: 'hal@example.test', password: 'qwerty123' })).rejects.toMatchObject({
      kind: 'invalid',
      errors: [{ field: 'password', message: 'is one of the most commonly used passwords; choose another' }],
    });
    await expect(admin.createUser({ username: 'hal', email: 'hal@example.test', password: 'hal@example.test' })).rejects.toMatchObject({ kind: 'invalid' });
    await expect(admin.createUser({ username: 'hal', email: 'hal@example.test', password: 'quiet violet harbour' })).resolves.toMatchObject({ username: 'hal' });
  });

  it('counts a password in characters: four emoji are too short, though eight UTF-16 units', async () => {
    const kim = webUser(t);
    const form = await kim.agent.get('/signup').expect(200);
    const res = await kim.agent.post('/signup').type('form').send({ _csrf: csrfOf(form.text), username: 'kim', email: 'kim@example.test', password: '😀🙂😎🤖' }).expect(400);
    expect(res.text).toContain('password must be 8 to 1024 characters');
  });

  // A refusal of the new password after the current one was checked told a stolen session the password was right.
  it('judges the new password before the current one: a wrong current password with a refused new one is a 400', async () => {
    const lee = webUser(t);
    await lee.signUp('leeleelee');
    for (const current of ['not the password', PASSWORD]) {
      const page = await lee.agent.get('/account').expect(200);
      const res = await lee.agent.post('/account/password').type('form').send({ _csrf: csrfOf(page.text), current_password: current, new_password: 'leeleelee' }).expect(400);
      expect(res.text).toContain('The new password must not be your user name');
    }
  });

  it('the password change form refuses them, and the old password still works', async () => {
    const ivy = webUser(t);
    await ivy.signUp('ivy');
    for (const [password, why] of [['iloveyou', 'is one of the most commonly used'], ['ivy@example.test', 'must not be your user name']]) {
      const page = await ivy.agent.get('/account').expect(200);
      const res = await ivy.agent.post('/account/password').type('form').send({ _csrf: csrfOf(page.text), current_password: PASSWORD, new_password: password }).expect(400);
      expect(res.text).toContain(`The new password ${why}`);
    }
    const login = webUser(t);
    const form = await login.agent.get('/login').expect(200);
    await login.agent.post('/login').type('form').send({ _csrf: csrfOf(form.text), login: 'ivy', password: PASSWORD }).expect(303);
  });
});

// A form's error said which field was wrong only in words: a screen reader on the field heard nothing of it,
// and the browser tab read as if nothing had gone wrong.
describe('web pages: the field an error is about', () => {
  const world = {} as { t: TestApp; ann: WebUser };
  beforeAll(async () => Object.assign(world, await appWithWebUser()));
  afterAll(() => world.t.close());

  /** The fields marked invalid, each with the id of the text that describes it, and whether that text is there. */
  const marked = (page: string) =>
    [...page.matchAll(/<(?:input|textarea) [^>]*name="([^"]+)"[^>]*aria-invalid="true" aria-describedby="([^"]+)"/g)].map(([, name, id]) => ({
      name,
      id,
      described: new RegExp(`<div id="${id}"><p class="error" role="alert">`).test(page),
    }));
  const title = (page: string) => /<title>([^<]*)<\/title>/.exec(page)![1];

  const signUp = async (fields: Record<string, string>) => {
    const gus = webUser(world.t);
    const form = await gus.agent.get('/signup').expect(200);
    expect({ title: title(form.text), marked: marked(form.text) }).toEqual({ title: 'Sign up · cardwork', marked: [] });
    return gus.agent.post('/signup').type('form').send({ _csrf: csrfOf(form.text), ...fields }).expect(400);
  };

  it('sign-up marks the one field refused, and the title says Error', async () => {
    const res = await signUp({ username: 'gus', email: 'not an address', password: PASSWORD });
    expect({ title: title(res.text), marked: marked(res.text) }).toEqual({
      title: 'Error: Sign up · cardwork',
      marked: [{ name: 'email', id: 'form-error', described: true }],
    });
  });

  it('sign-up marks no field when the error is about several', async () => {
    const res = await signUp({ username: 'bad name!', email: 'not an address', password: PASSWORD });
    expect({ title: title(res.text), marked: marked(res.text) }).toEqual({ title: 'Error: Sign up · cardwork', marked: [] });
  });

  it('sign-up marks the user name or email already taken (409)', async () => {
    for (const [fields, name] of [
      [{ username: 'ann', email: 'other@example.test' }, 'username'],
      [{ username: 'other', email: 'ann@example.test' }, 'email'],
    ] as const) {
      const gus = webUser(world.t);
      const form = await gus.agent.get('/signup').expect(200);
      const res = await gus.agent.post('/signup').type('form').send({ _csrf: csrfOf(form.text), password: PASSWORD, ...fields }).expect(409);
      expect({ title: title(res.text), marked: marked(res.text) }).toEqual({
        title: 'Error: Sign up · cardwork',
        marked: [{ name, id: 'form-error', described: true }],
      });
    }
  });

  it('the account page marks an API key name refused, keeps it, and creates nothing', async () => {
    const page = await world.ann.agent.get('/account').expect(200);
    const res = await world.ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'ci\u200Bbot' }).expect(400);
    expect({ title: title(res.text), marked: marked(res.text) }).toEqual({
      title: 'Error: Account · cardwork',
      marked: [{ name: 'name', id: 'key-error', described: true }],
    });
    expect(res.text).toContain('value="ci\u200Bbot"');
    expect(res.text).toContain('No API keys yet.');
  });

  it('the developer page marks the redirect URIs or the type refused', async () => {
    for (const [fields, name] of [
      [{ redirect_uris: 'not a uri', client_type: 'confidential' }, 'redirect_uris'],
      [{ redirect_uris: 'https://app.example.test/cb', client_type: 'both' }, 'client_type'],
    ] as const) {
      const page = await world.ann.agent.get('/developer').expect(200);
      const res = await world.ann.agent.post('/developer/apps').type('form').send({ _csrf: csrfOf(page.text), name: 'App', ...fields }).expect(400);
      expect(title(res.text)).toBe('Error: Developer · cardwork');
      expect(new Set(marked(res.text).map((m) => `${m.name} ${m.id} ${m.described}`))).toEqual(new Set([`${name} form-error true`]));
    }
  });

  it('the password form marks the current password when wrong, the new one when refused', async () => {
    for (const [fields, status, name] of [
      [{ current_password: 'not it at all', new_password: 'a fine new passphrase' }, 401, 'current_password'],
      [{ current_password: PASSWORD, new_password: 'short' }, 400, 'new_password'],
    ] as const) {
      const page = await world.ann.agent.get('/account').expect(200);
      const res = await world.ann.agent.post('/account/password').type('form').send({ _csrf: csrfOf(page.text), ...fields }).expect(status);
      expect({ title: title(res.text), marked: marked(res.text) }).toEqual({
        title: 'Error: Account · cardwork',
        marked: [{ name, id: 'password-error', described: true }],
      });
    }
  });

  it('a failed login says Error in the title, with no one field to blame', async () => {
    const gus = webUser(world.t);
    const login = await gus.agent.get('/login').expect(200);
    const res = await gus.agent.post('/login').type('form').send({ _csrf: csrfOf(login.text), login: 'ann', password: 'wrong password' }).expect(401);
    expect({ title: title(res.text), marked: marked(res.text) }).toEqual({ title: 'Error: Log in · cardwork', marked: [] });
  });
});
