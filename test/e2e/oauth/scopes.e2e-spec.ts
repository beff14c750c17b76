import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Scope } from '../../../src/shared/domain/actor.js';
import { csrfOf, pkce, tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CALLBACK = 'http://127.0.0.1:8765/callback';
const API = '/api/1.0';
const PUBLIC_ROUTES = new Set(['GET /api/1.0/health', 'GET /api/1.0/ready']);

type Route = { method: string; path: string };

/** Every route the app serves under the API prefix, from the router itself (so routes added later are walked too). */
function servedRoutes(t: TestApp): Route[] {
  type Layer = { route?: { path: string; methods: Record<string, boolean> } };
  const server = t.app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
  return (server.router ?? server._router)!.stack
    .filter((l) => l.route?.path.startsWith(`${API}/`) && !l.route.path.endsWith('spec.json'))
    .flatMap((l) => Object.keys(l.route!.methods).map((m) => ({ method: m.toUpperCase(), path: l.route!.path })));
}

describe('OAuth scopes on every API route', () => {
  let t: TestApp;
  let ann: WebUser;
  let app: RegisteredApp;
  let apiKey: string;
  const tokens = {} as Record<Scope, string>;

  async function tokenWith(scope: Scope): Promise<string> {
    const { verifier, challenge } = pkce();
    const code = await ann.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope, code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: app.clientId, code_verifier: verifier }).expect(200);
    return res.body.access_token as string;
  }

  function call(route: Route, auth: Record<string, string>) {
    const path = route.path.replace(/:[A-Za-z_]+/g, (p) => (/id$/i.test(p) ? '999999' : 'x'));
    return t.http[route.method.toLowerCase() as 'get'](path).set(auth);
  }

  beforeAll(async () => {
    t = await createTestApp();
    ann = webUser(t);
    await ann.signUp('ann');
    app = await ann.registerApp([CALLBACK], 'public');
    for (const scope of ['read_user', 'read_workspace', 'write_workspace'] as Scope[]) tokens[scope] = await tokenWith(scope);
    const page = await ann.agent.get('/account').expect(200);
    const created = await ann.agent.post('/account/api-keys').type('form').send({ _csrf: csrfOf(page.text), name: 'walk' }).expect(201);
    apiKey = /id="new-api-key">([^<]+)</.exec(created.text)![1];
  });
  afterAll(() => t.close());

  it('walks the router: each route answers each credential as its declared scope says', async () => {
    const routes = servedRoutes(t);
    expect(routes.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const isPublic = PUBLIC_ROUTES.has(name);
      const isMe = name === `GET ${API}/me`;
      const manageKeys = route.path.startsWith(`${API}/me/api-keys`);
      const expectations: Array<[string, Record<string, string>, boolean]> = [
        ['API key', { 'X-Api-Key': apiKey }, true],
        ['read_user', { Authorization: `Bearer ${tokens.read_user}` }, isPublic || isMe],
        ['read_workspace', { Authorization: `Bearer ${tokens.read_workspace}` }, isPublic || (route.method === 'GET' && !manageKeys)],
        ['write_workspace', { Authorization: `Bearer ${tokens.write_workspace}` }, isPublic || !manageKeys],
      ];
      for (const [who, auth, allowed] of expectations) {
        const res = await call(route, auth);
        if ((res.status === 403) === allowed) wrong.push(`${name} as ${who}: ${res.status}`);
        if (!allowed && res.status === 403) {
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body.required_scope).toEqual(expect.any(String));
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('a read_workspace token cannot write, a read_user token cannot read a project; write_workspace can do both', async () => {
    const org = await t.http.post(`${API}/organizations`).set('X-Api-Key', apiKey).send({ name: 'Acme' }).expect(201);
    const project = await t.http.post(`${API}/organizations/${org.body.id}/projects`).set('X-Api-Key', apiKey).send({ title: 'Roadmap' }).expect(201);
    const bearer = (scope: Scope) => ({ Authorization: `Bearer ${tokens[scope]}` });

    const denied = await t.http.get(`${API}/projects/${project.body.id}`).set(bearer('read_user')).expect(403);
    expect(denied.body).toMatchObject({ status: 403, required_scope: 'read_workspace' });
    await t.http.get(`${API}/me`).set(bearer('read_user')).expect(200);

    await t.http.get(`${API}/projects/${project.body.id}`).set(bearer('read_workspace')).expect(200);
    const write = await t.http.post(`${API}/cards/${project.body.top_level_card_id}/children`).set(bearer('read_workspace')).send({ title: 'No' }).expect(403);
    expect(write.body.required_scope).toBe('write_workspace');
    const cards = await t.http.get(`${API}/projects/${project.body.id}/cards`).set('X-Api-Key', apiKey).expect(200);
    expect(cards.body).toEqual([]);

    await t.http.post(`${API}/cards/${project.body.top_level_card_id}/children`).set(bearer('write_workspace')).send({ title: 'Yes' }).expect(201);
    await t.http.get(`${API}/me/api-keys`).set(bearer('write_workspace')).expect(403);
  });
});
