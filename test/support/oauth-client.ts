import { createHash, randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp } from './test-app.js';

export const PASSWORD = 'correct horse battery staple';

/** A PKCE pair: a random verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const unescape = (s: string) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF field in page: ${html.slice(0, 300)}`);
  return match[1];
}

/** The hidden fields of the page's form, as a browser would post them back. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescape(m[1])] = unescape(m[2]);
  return fields;
}

export interface RegisteredApp {
  clientId: string;
  clientSecret: string | null;
}

/**
 * A user in a browser, driven through the real pages over HTTP (forms, cookies,
 * CSRF fields, redirects) with supertest's cookie-keeping agent.
 */
export function webUser(t: TestApp) {
  const agent = request.agent(t.app.getHttpServer());
  return {
    agent,
    async signUp(username: string): Promise<void> {
      const form = await agent.get('/signup').expect(200);
      await agent
        .post('/signup')
        .type('form')
        .send({ _csrf: csrfOf(form.text), username, email: `${username}@example.test`, password: PASSWORD })
        .expect(303);
    },
    async registerApp(redirectUris: string[], type: 'confidential' | 'public' = 'confidential', name = 'Test app'): Promise<RegisteredApp> {
      const page = await agent.get('/developer').expect(200);
      const res = await agent
        .post('/developer/apps')
        .type('form')
        .send({ _csrf: csrfOf(page.text), name, redirect_uris: redirectUris.join('\n'), client_type: type })
        .expect(201);
      const clientId = /id="client-id">([^<]+)</.exec(res.text)![1];
      const secret = /id="client-secret">([^<]+)</.exec(res.text);
      return { clientId, clientSecret: secret ? secret[1] : null };
    },
    /** GET /oauth/authorize: the raw answer (consent page, error page or redirect). */
    authorize(params: Record<string, string>) {
      return agent.get('/oauth/authorize').query(params);
    },
    /** Consent page, then the chosen button; returns the redirect the browser would follow. */
    async decide(params: Record<string, string>, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
      const page = await agent.get('/oauth/authorize').query(params).expect(200);
      const res = await agent
        .post('/oauth/authorize')
        .type('form')
        .send({ ...hiddenFields(page.text), decision })
        .expect(303);
      return new URL(res.headers.location as string);
    },
    /** Approves and returns the code. */
    async code(params: Record<string, string>): Promise<string> {
      const back = await this.decide(params);
      const code = back.searchParams.get('code');
      expect(code).toEqual(expect.any(String));
      return code!;
    },
  };
}

export type WebUser = ReturnType<typeof webUser>;

/** A new app with one user signed up on its pages (`ann` unless named): a describe's usual start. */
export async function appWithWebUser(username = 'ann'): Promise<{ t: TestApp; ann: WebUser }> {
  const t = await createTestApp();
  const ann = webUser(t);
  await ann.signUp(username);
  return { t, ann };
}

/** POST /oauth/token with form fields. */
export function tokenRequest(t: TestApp, fields: Record<string, string>, basic?: { id: string; secret: string }) {
  const req = t.http.post('/oauth/token').type('form');
  if (basic) req.auth(basic.id, basic.secret);
  return req.send(fields);
}
