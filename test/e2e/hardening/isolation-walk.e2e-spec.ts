import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { snapshotRows } from '../../support/db-snapshot.js';
import { pkce, tokenRequest, webUser } from '../../support/oauth-client.js';
import { loadOperations, minimalBody, type Operation } from '../../support/openapi.js';
import { fillPath, listRoutes, pathParams, type RouteInfo } from '../../support/routes.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

// Team isolation, walked over the router's own list of routes (issue 13), so a
// route added later is covered without anyone listing it here. Every route is
// called with another team's ids under every kind of credential (an API key
// as X-Api-Key and as Basic, an OAuth access token of another outsider); a
// viewer tries every write route of its team; nothing may change. A refusal
// for another team's id is the very answer a missing id gets.

const MARKER = `SECRET${Math.random().toString(36).slice(2, 10)}`;
const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What a team owns, by the path segment that names it (`/cards/:id` → card). */
interface TeamIds {
  organizations: number;
  projects: number;
  cards: number;
  attributes: number;
  models: number;
  'group-types': number;
  groups: number;
  files: number;
  'api-keys': number;
  /** A spreadsheet upload of the importer (0 when the importer serves no discover route). */
  uploads: number;
  /** `:userId` */
  member: number;
  /** `:attr` */
  attr: string;
}

/** Body properties that name a team's resources, and which resource. */
const BODY_ID_KINDS: Record<string, keyof TeamIds> = {
  parent_id: 'cards',
  card_id: 'cards',
  group_id: 'groups',
  type_id: 'group-types',
  model_id: 'models',
  project_id: 'projects',
  organization_id: 'organizations',
  attribute_id: 'attributes',
  discover_file_id: 'uploads',
};

function pathValue(ids: TeamIds, route: string) {
  return (p: { name: string; after: string }): string | number => {
    if (p.name === 'attr') return ids.attr;
    if (p.name === 'userId') return ids.member;
    if (p.name === 'fileId') return ids.uploads;
    if (p.name === 'id' && p.after in ids) return ids[p.after as keyof TeamIds];
    throw new Error(`isolation walk: no team resource for :${p.name} after "${p.after}" in ${route}; teach TeamIds about it`);
  };
}

function bodyIds(ids: TeamIds) {
  return (property: string): number | undefined => {
    const kind = BODY_ID_KINDS[property];
    return kind ? (ids[kind] as number) : undefined;
  };
}

describe('team isolation over every route', () => {
  let t: TestApp;
  let routes: RouteInfo[];
  let ops: Map<string, Operation>;
  let victimAdmin: TestUser;
  let viewer: TestUser;
  let attacker: TestUser;
  /** An access token with every scope, of a user outside the victim's team who signed up on the pages. */
  let outsiderToken: string;
  let victim: TeamIds;
  let own: TeamIds;

  const credentials = (u: TestUser) => ({
    'X-Api-Key': as(u),
    Basic: { Authorization: `Basic ${Buffer.from(`${u.apiKey}:`).toString('base64')}` },
  });
  /** The attacker's key both ways, and another outsider's OAuth token. */
  const outsiderCredentials = () => ({ ...credentials(attacker), Bearer: { Authorization: `Bearer ${outsiderToken}` } });

  /** An access token with every scope for a new user, through the pages (sign-up, app, consent, code exchange). */
  async function tokenOfNewUser(username: string): Promise<string> {
    const user = webUser(t);
    await user.signUp(username);
    const callback = 'http://127.0.0.1:9/callback';
    const app = await user.registerApp([callback], 'public');
    const { verifier, challenge } = pkce();
    const scope = 'read_user read_workspace write_workspace';
    const code = await user.code({ response_type: 'code', client_id: app.clientId, redirect_uri: callback, scope, code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: callback, client_id: app.clientId, code_verifier: verifier }).expect(200);
    return res.body.access_token as string;
  }

  /** The answer to `route` with ids that name nothing, as `headers`' caller: what another team's ids must get too. */
  function missingIdAnswer(route: RouteInfo, headers: Record<string, string>, body: object | undefined) {
    return call(route, fillPath(route.path, (p) => (p.name === 'attr' ? 'NoSuchField' : 987654321)), headers, body);
  }

  async function team(u: TestUser, title: string): Promise<TeamIds> {
    const ws = workspaceClient(t);
    const orgId = await ws.team(u, title);
    const project = await ws.project(u, orgId, title);
    const post = async (path: string, body: object) => (await t.http.post(`${API}${path}`).set(as(u)).send(body).expect(201)).body;
    const card = await post(`/cards/${project.top_level_card_id}/children`, { title });
    const attribute = await post(`/projects/${project.id}/attributes`, { name: 'Secret', type: 'text' });
    const filesField = await post(`/projects/${project.id}/attributes`, { name: 'Docs', type: 'files' });
    const model = await post(`/projects/${project.id}/models`, { name: title });
    await post(`/models/${model.id}/attributes`, { name: `${title} only`, type: 'number' });
    const groupType = await post(`/projects/${project.id}/group-types`, { name: title, one_group_per_card: false });
    const group = await post(`/cards/${project.top_level_card_id}/groups`, { type_id: groupType.id, title });
    await t.http.post(`${API}/cards/${card.id}/add-to-group`).set(as(u)).send({ group_id: group.id }).expect(200);
    await t.http.post(`${API}/cards/${card.id}/attributes/Secret`).set(as(u)).send({ value: title }).expect(200);
    const withFile = await t.http
      .post(`${API}/cards/${card.id}/attributes/Docs/append`)
      .set(as(u))
      .send({ value: { name: `${title}.txt`, data: title } })
      .expect(200);
    await post(`/cards/${card.id}/comments`, { content: title });
    const keys = await t.http.get(`${API}/me/api-keys`).set(as(u)).expect(200);
    void filesField;
    const discover = routes.some((r) => r.path === `${API}/importers/spreadsheet/discover`)
      ? (await t.http.post(`${API}/importers/spreadsheet/discover`).set(as(u)).attach('file', Buffer.from(`title\n${title}\n`), 'cards.csv').expect(201)).body
      : { file_id: 0 };
    return {
      organizations: orgId,
      projects: project.id,
      cards: card.id,
      attributes: attribute.id,
      models: model.id,
      'group-types': groupType.id,
      groups: group.id,
      files: withFile.body.attributes.Docs[0].id,
      'api-keys': keys.body[0].id,
      uploads: discover.file_id,
      member: u.id,
      attr: 'Secret',
    };
  }

  beforeAll(async () => {
    t = await createTestApp();
    routes = listRoutes(t.app).filter((r) => r.path.startsWith(`${API}/`));
    victimAdmin = await t.user();
    viewer = await t.user();
    attacker = await t.user();
    victim = await team(victimAdmin, MARKER);
    own = await team(attacker, 'Mine');
    await workspaceClient(t).addMember(victimAdmin, victim.organizations, viewer, 'viewer');
    outsiderToken = await tokenOfNewUser('outsider');
    ops = new Map((await loadOperations(t.http)).map((o) => [`${o.method} ${o.path}`, o]));
  });
  afterAll(() => t.close());

  const call = (route: RouteInfo, path: string, headers: Record<string, string>, body?: object) => {
    const req = t.http[route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).set(headers);
    return WRITE.has(route.method) && body ? req.send(body) : req;
  };

  it('walks a router that knows the routes of every module', () => {
    expect(routes.length).toBeGreaterThan(50);
    for (const p of ['/cards/:id', '/organizations/:id/members', '/groups/:id', '/files/:id']) {
      expect(routes.some((r) => r.path === `${API}${p}`)).toBe(true);
    }
  });

  it("answers 404 for another team's ids in the path, under every credential kind, and changes nothing", async () => {
    const before = await snapshotRows(t.app);
    const wrong: string[] = [];
    for (const route of routes.filter((r) => pathParams(r.path).length > 0)) {
      const path = fillPath(route.path, pathValue(victim, route.path));
      const body = minimalBody(ops.get(`${route.method} ${route.path}`)?.body, bodyIds(own));
      for (const [kind, headers] of Object.entries(outsiderCredentials())) {
        const res = await call(route, path, headers, body);
        // An access token is refused the caller's own API keys whatever the id (they need an API key).
        const keysOnly = kind === 'Bearer' && route.path.startsWith(`${API}/me/api-keys`);
        const missing = await missingIdAnswer(route, headers, body);
        if (keysOnly ? res.status !== 403 : res.status !== 404) wrong.push(`${kind} ${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 120)}`);
        else if (!keysOnly) expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        // Told apart from an id that names nothing by nothing but the id it names.
        const shown = (text: string) => text.replace(/\d+/g, 'N');
        if (shown(res.text) !== shown(missing.text)) wrong.push(`${kind} ${route.method} ${route.path}: ${res.text.slice(0, 120)} ≠ missing id's ${missing.text.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await snapshotRows(t.app)).toEqual(before);
  });

  it("answers 400 for another team's ids in a body, and changes nothing", async () => {
    const before = await snapshotRows(t.app);
    const wrong: string[] = [];
    let tried = 0;
    for (const route of routes.filter((r) => WRITE.has(r.method))) {
      const op = ops.get(`${route.method} ${route.path}`);
      for (const property of Object.keys(op?.body?.properties ?? {})) {
        if (!property.endsWith('_id')) continue;
        if (!(property in BODY_ID_KINDS)) {
          wrong.push(`${route.method} ${route.path}: body property ${property} names a resource the walk does not know; add it to BODY_ID_KINDS`);
          continue;
        }
        const path = fillPath(route.path, pathValue(own, route.path));
        const body = { ...minimalBody(op!.body, bodyIds(own)), [property]: victim[BODY_ID_KINDS[property]] };
        // The attacker's own resources in the path: the outsider's token has none of its own to name.
        for (const [kind, headers] of Object.entries(credentials(attacker))) {
          tried++;
          const res = await call(route, path, headers, body);
          if (res.status !== 400) wrong.push(`${kind} ${route.method} ${route.path} ${property}: ${res.status} ${res.text.slice(0, 120)}`);
        }
      }
    }
    expect(tried).toBeGreaterThan(5);
    expect(wrong).toEqual([]);
    expect(await snapshotRows(t.app)).toEqual(before);
  });

  it('answers 403 to a viewer on every write route of its team, and changes nothing', async () => {
    const before = await snapshotRows(t.app);
    const wrong: string[] = [];
    // Not the user's own: their keys, and their spreadsheet uploads (another user's upload is a 404 to anyone, walked above).
    const own = (path: string) => path.startsWith(`${API}/me/`) || path.startsWith(`${API}/importers/`);
    const teamWrites = routes.filter((r) => WRITE.has(r.method) && pathParams(r.path).length > 0 && !own(r.path));
    for (const route of teamWrites) {
      const path = fillPath(route.path, pathValue(victim, route.path));
      const body = minimalBody(ops.get(`${route.method} ${route.path}`)?.body, bodyIds(victim));
      for (const [kind, headers] of Object.entries(credentials(viewer))) {
        const res = await call(route, path, headers, body);
        if (res.status !== 403) wrong.push(`${kind} ${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 120)}`);
      }
    }
    expect(teamWrites.length).toBeGreaterThan(20);
    expect(wrong).toEqual([]);
    expect(await snapshotRows(t.app)).toEqual(before);
  });

  it("never shows another team's data in a listing", async () => {
    const leaks: string[] = [];
    for (const route of routes.filter((r) => r.method === 'GET' && pathParams(r.path).length === 0)) {
      for (const [kind, headers] of Object.entries(outsiderCredentials())) {
        const res = await t.http.get(route.path).set(headers);
        expect(res.status).toBeLessThan(500);
        if (res.text.includes(MARKER)) leaks.push(`${kind} GET ${route.path}`);
      }
    }
    const search = routes.find((r) => r.path === `${API}/search`);
    if (search) {
      const res = await t.http.get(`${API}/search`).query({ filter: MARKER }).set(as(attacker));
      if (res.text.includes(MARKER)) leaks.push('GET /search?filter=<marker>');
    }
    expect(leaks).toEqual([]);
  });
});
