import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { loadOperations, minimalBody, type Operation } from '../../support/openapi.js';
import { fillPath, listRoutes, pathParams, type RouteInfo } from '../../support/routes.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

// Conflicting pairs fired at every write route of the router (issue 13):
// the same write twice (add/add), a write and the deletion of what it names
// (update/delete, create/delete, move/delete), and a write and the deletion of
// its project. No answer may be 5xx, and the data must stay whole afterwards.

const WRITE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Cross-module links that no foreign key guards: a race must not leave one dangling. */
const LINKS: Array<[table: string, column: string, target: string]> = [
  ['cards.cards', 'project_id', 'workspace.projects'],
  ['cards.cards', 'model_id', 'fields.models'],
  ['cards.project_counters', 'project_id', 'workspace.projects'],
  ['cards.card_stream', 'project_id', 'workspace.projects'],
  ['fields.attributes', 'project_id', 'workspace.projects'],
  ['fields.attributes', 'group_type_id', 'grouping.group_types'],
  ['fields.models', 'project_id', 'workspace.projects'],
  ['fields.files', 'project_id', 'workspace.projects'],
  ['grouping.group_types', 'project_id', 'workspace.projects'],
  ['grouping.groups', 'project_id', 'workspace.projects'],
  ['grouping.memberships', 'type_id', 'grouping.group_types'],
  ['workspace.projects', 'top_level_card_id', 'cards.cards'],
];

interface Fixture {
  ids: Record<string, number>;
  attr: string;
}

describe('races at every write route', () => {
  let t: TestApp;
  let admin: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let orgId: number;
  let routes: RouteInfo[];
  let ops: Map<string, Operation>;
  let links: Array<[string, string, string]>;

  async function fixture(): Promise<Fixture> {
    const ws = workspaceClient(t);
    const project = await ws.project(admin, orgId);
    const post = async (path: string, body: object) => (await t.http.post(`${API}${path}`).set(as(admin)).send(body).expect(201)).body;
    const root = project.top_level_card_id;
    const c1 = await post(`/cards/${root}/children`, { title: 'one' });
    const c2 = await post(`/cards/${root}/children`, { title: 'two' });
    await post(`/cards/${c1.id}/children`, { title: 'one.one' });
    const notes = await post(`/projects/${project.id}/attributes`, { name: 'Notes', type: 'text' });
    const docs = await post(`/projects/${project.id}/attributes`, { name: 'Docs', type: 'files' });
    const model = await post(`/projects/${project.id}/models`, { name: 'Bug' });
    const groupType = await post(`/projects/${project.id}/group-types`, { name: 'Labels', one_group_per_card: false });
    const group = await post(`/cards/${root}/groups`, { type_id: groupType.id, title: 'Red' });
    await t.http.post(`${API}/cards/${c1.id}/add-to-group`).set(as(admin)).send({ group_id: group.id }).expect(200);
    const file = await t.http.post(`${API}/cards/${c1.id}/attributes/Docs/append`).set(as(admin)).send({ value: { name: 'a.txt', data: 'a' } }).expect(200);
    const key = await post('/me/api-keys', { name: 'spare' });
    void docs;
    return {
      ids: {
        organizations: orgId,
        projects: project.id,
        cards: c1.id,
        attributes: notes.id,
        models: model.id,
        'group-types': groupType.id,
        groups: group.id,
        files: file.body.attributes.Docs[0].id,
        'api-keys': key.id,
        userId: bob.id,
        // body ids
        parent_id: c2.id,
        group_id: group.id,
        type_id: groupType.id,
        model_id: model.id,
        user: carol.id,
      },
      attr: 'Notes',
    };
  }

  const discoverUpload = async (): Promise<number> =>
    (await t.http.post(`${API}/importers/spreadsheet/discover`).set(as(admin)).attach('file', Buffer.from('Title\nraced\n'), 'raced.csv').expect(201)).body.file_id;
  const deleteRouteFor = (segment: string) => routes.find((r) => r.method === 'DELETE' && r.path === `${API}/${segment}/:id`);
  const BODY_KIND: Record<string, string> = { parent_id: 'cards', group_id: 'groups', type_id: 'group-types', model_id: 'models' };

  function request(route: RouteInfo, f: Fixture) {
    const path = fillPath(route.path, (p) => {
      if (p.name === 'attr') return f.attr;
      if (p.name === 'userId') return f.ids.userId;
      if (p.name === 'fileId') return f.ids.uploads;
      const id = f.ids[p.after];
      if (id === undefined) throw new Error(`race test: no fixture id for :${p.name} after "${p.after}" in ${route.path}`);
      return id;
    });
    const op = ops.get(`${route.method} ${route.path}`);
    let body: Record<string, unknown> = minimalBody(op?.body, (prop) => f.ids[prop]);
    if (route.path === `${API}/cards/:id/attributes`) body = { Notes: 'raced' };
    if (route.path.endsWith('/relocate')) body = { parent_id: f.ids.parent_id, position: 0 };
    if (route.path.endsWith('/members')) body = { user: f.ids.user, role: 'member' };
    const send = () => {
      const req = t.http[route.method.toLowerCase() as 'post' | 'put' | 'patch' | 'delete'](path).set(as(admin));
      return route.method === 'DELETE' ? req : req.send(body);
    };
    return { path, body, send };
  }

  async function danglingLinks(): Promise<string[]> {
    const ds = t.app.get(DataSource);
    const found: string[] = [];
    for (const [table, column, target] of links) {
      const [row] = await ds.query(
        `SELECT count(*)::int AS n FROM ${table} x WHERE x.${column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${target} y WHERE y.id = x.${column})`,
      );
      if (row.n > 0) found.push(`${row.n} ${table}.${column} → missing ${target}`);
    }
    return found;
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
    admin = await t.user();
    bob = await t.user();
    carol = await t.user();
    orgId = await workspaceClient(t).team(admin, 'Racers');
    await workspaceClient(t).addMember(admin, orgId, bob, 'member');
    routes = listRoutes(t.app).filter((r) => r.path.startsWith(`${API}/`));
    ops = new Map((await loadOperations(t.http)).map((o) => [`${o.method} ${o.path}`, o]));
    const columns: Array<{ c: string }> = await t.app
      .get(DataSource)
      .query(`SELECT table_schema || '.' || table_name || '.' || column_name AS c FROM information_schema.columns`);
    const known = new Set(columns.map((r) => r.c));
    links = LINKS.filter(([table, column, target]) => known.has(`${table}.${column}`) && known.has(`${target}.id`));
  });
  afterAll(() => t.close());

  it('answers no conflicting pair with a 5xx and leaves no dangling link', async () => {
    const writes = routes.filter((r) => WRITE.has(r.method) && pathParams(r.path).length > 0 && !r.path.includes('/importers/'));
    expect(writes.length).toBeGreaterThan(25);
    const failures: string[] = [];
    let pairs = 0;
    const race = async (label: string, a: () => PromiseLike<{ status: number; text: string }>, b: () => PromiseLike<{ status: number; text: string }>) => {
      pairs++;
      const answers = await Promise.all([a(), b()]);
      for (const res of answers) if (res.status >= 500) failures.push(`${label}: ${res.status} ${res.text.slice(0, 160)}`);
      const dangling = await danglingLinks();
      if (dangling.length) failures.push(`${label}: left ${dangling.join(', ')}`);
    };
    for (const route of writes) {
      const name = `${route.method} ${route.path.slice(API.length)}`;
      let f = await fixture();
      const w = request(route, f);
      await race(`${name} twice`, w.send, w.send);

      const last = pathParams(route.path).at(-1)!;
      const del = last.name === 'id' ? deleteRouteFor(last.after) : undefined;
      if (del && del.path !== route.path) {
        f = await fixture();
        const w2 = request(route, f);
        await race(`${name} vs DELETE /${last.after}`, w2.send, request(del, f).send);
      }
      for (const [prop, kind] of Object.entries(BODY_KIND)) {
        const delRef = deleteRouteFor(kind);
        if (!delRef || !(prop in request(route, f).body)) continue;
        f = await fixture();
        const w3 = request(route, f);
        const target = request(delRef, { ...f, ids: { ...f.ids, [kind]: w3.body[prop] as number } });
        await race(`${name} vs DELETE of its ${prop}`, w3.send, target.send);
      }
      f = await fixture();
      const w4 = request(route, f);
      await race(`${name} vs DELETE /projects`, w4.send, request(deleteRouteFor('projects')!, f).send);
    }
    console.log(`races: ${pairs} conflicting pairs over ${writes.length} write routes`);
    expect(failures).toEqual([]);
  }, 600_000);

  /**
   * The same DELETE sent eight times at once is one deletion: one 200, the
   * others 404, as when they come one after the other. A field's and a
   * member's deletions read the row unlocked and deleted without counting,
   * so several (at times all) answered 200. Revoking a key stays 200 each
   * time: a revoked key is still there, listed with its revoked_at.
   */
  it('answers the same DELETE sent several times at once with one 200 and 404s', async () => {
    const deletions = routes.filter((r) => r.method === 'DELETE' && !r.path.endsWith('/archive'));
    expect(deletions.length).toBeGreaterThanOrEqual(7);
    const answers: Record<string, number[]> = {};
    for (const route of deletions) {
      const f = await fixture();
      // The member to remove (the race above may have removed bob already).
      if (route.path.endsWith('/members/:userId')) await t.http.post(`${API}/organizations/${orgId}/members`).set(as(admin)).send({ user: bob.id, role: 'member' });
      // A spreadsheet upload, made here only: each counts against the user's upload quota.
      if (route.path.endsWith('/files/:fileId')) f.ids.uploads = await discoverUpload();
      const del = request(route, f);
      answers[route.path.slice(API.length)] = (await Promise.all(Array.from({ length: 8 }, () => del.send()))).map((r) => r.status).sort();
    }
    const once = [200, 404, 404, 404, 404, 404, 404, 404];
    const expected = Object.fromEntries(Object.keys(answers).map((path) => [path, path === '/me/api-keys/:id' ? Array(8).fill(200) : once]));
    expect(answers).toEqual(expected);
  });

  it('adds a member once when two requests add the same user at once: one 201, one 409', async () => {
    for (let i = 0; i < 5; i++) {
      await t.http.delete(`${API}/organizations/${orgId}/members/${carol.id}`).set(as(admin));
      const f = { ids: { organizations: orgId, user: carol.id }, attr: '' };
      const add = request(routes.find((r) => r.method === 'POST' && r.path === `${API}/organizations/:id/members`)!, f);
      const [one, two] = await Promise.all([add.send(), add.send()]);
      expect([one.status, two.status].sort()).toEqual([201, 409]);
    }
    const members = await t.http.get(`${API}/organizations/${orgId}/members`).set(as(admin)).expect(200);
    expect(members.body.filter((m: { user_id: number }) => m.user_id === carol.id)).toHaveLength(1);
  });
});
