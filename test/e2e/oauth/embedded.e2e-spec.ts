import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pkce, tokenRequest, webUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CALLBACK = 'http://localhost:7000/cb';

describe('OAuth and the web pages on the embedded database (PGlite)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ embedded: true });
  });
  afterAll(() => t.close());

  it('signs up, registers a public app with two redirect URIs, and runs the flow with a refresh', async () => {
    const ann = webUser(t);
    await ann.signUp('ann');
    const app = await ann.registerApp([CALLBACK, 'https://app.example.test/cb'], 'public');
    const { verifier, challenge } = pkce();
    const code = await ann.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'read_user read_workspace', code_challenge: challenge });
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: app.clientId, code_verifier: verifier }).expect(200);
    expect(tokens.body.scope).toBe('read_user read_workspace');
    const me = await t.http.get('/api/1.0/me').set('Authorization', `Bearer ${tokens.body.access_token}`).expect(200);
    expect(me.body.username).toBe('ann');
    await t.http.post('/api/1.0/organizations').set('Authorization', `Bearer ${tokens.body.access_token}`).send({ name: 'No' }).expect(403);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: app.clientId }).expect(200);
    await t.http.get('/api/1.0/organizations').set('Authorization', `Bearer ${refreshed.body.access_token}`).expect(200);
  });
});
