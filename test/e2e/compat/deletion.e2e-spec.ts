import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { colonlessBasic, listen, rawClient, send, teamWithProject, type RawClient, type RawProject } from './raw-client.js';

/**
 * Issue 14.4: every DELETE route answers 200 with `{"id": <id>, "deleted": true}`
 * (DESIGN.md §2), because the original's clients parse every answer as JSON.
 * The routes are read from the app's router, so a new DELETE route fails here
 * until it gets a fixture below.
 */
interface Doomed {
  /** The DELETE request's path under /api/1.0. */
  path: string;
  /** The id the answer must name. */
  id: number;
  /** Asserts the thing is really gone. */
  gone(): Promise<void>;
}

/** DELETE routes that are not deletions. */
const NOT_DELETIONS: Record<string, string> = {
  '/cards/:id/archive': 'restores an archived card and answers the card (DESIGN.md §2: card operations)',
};

describe('compatibility: every deletion answers 200 with {id, deleted: true}', () => {
  let t: TestApp;
  let c: RawClient;
  let ann: TestUser;
  let project: RawProject;
  let org: number;

  const card = async (title: string) =>
    c.json<{ id: number }>('POST', `/cards/${project.top_level_card_id}/children`, { title }, 201);
  const groupType = async (name: string) =>
    c.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name, one_group_per_card: true }, 201);
  const notFound = async (path: string) => expect((await c.call('GET', path)).status).toBe(404);

  const fixtures: Record<string, () => Promise<Doomed>> = {
    '/me/api-keys/:id': async () => {
      const key = await c.json<{ id: number; api_key: string }>('POST', '/me/api-keys', { name: 'old laptop' }, 201);
      return {
        path: `/me/api-keys/${key.id}`,
        id: key.id,
        gone: async () => expect((await send(`${c.api}/me`, 'GET', { Authorization: colonlessBasic(key.api_key) })).status).toBe(401),
      };
    },
    '/organizations/:id/members/:userId': async () => {
      const bob = await t.user();
      await c.json('POST', `/organizations/${org}/members`, { user: `@${bob.username}`, role: 'member' }, 201);
      return {
        path: `/organizations/${org}/members/${bob.id}`,
        id: bob.id,
        gone: async () => {
          const members = await c.json<{ user_id: number }[]>('GET', `/organizations/${org}/members`, undefined, 200);
          expect(members.map((m) => m.user_id)).not.toContain(bob.id);
        },
      };
    },
    '/projects/:id': async () => {
      const doomed = await c.json<RawProject>('POST', `/organizations/${org}/projects`, { title: 'Short-lived' }, 201);
      return { path: `/projects/${doomed.id}`, id: doomed.id, gone: () => notFound(`/projects/${doomed.id}`) };
    },
    '/cards/:id': async () => {
      const doomed = await card('Doomed card');
      return { path: `/cards/${doomed.id}`, id: doomed.id, gone: () => notFound(`/cards/${doomed.id}`) };
    },
    '/attributes/:id': async () => {
      const field = await c.json<{ id: number }>('POST', `/projects/${project.id}/attributes`, { name: 'Doomed field', type: 'text' }, 201);
      return { path: `/attributes/${field.id}`, id: field.id, gone: () => notFound(`/attributes/${field.id}`) };
    },
    '/groups/:id': async () => {
      const type = await groupType('Columns');
      const group = await c.json<{ id: number }>('POST', `/cards/${project.top_level_card_id}/groups`, { type_id: type.id, title: 'Doomed' }, 201);
      return { path: `/groups/${group.id}`, id: group.id, gone: () => notFound(`/groups/${group.id}`) };
    },
    '/group-types/:id': async () => {
      const type = await groupType('Doomed type');
      return { path: `/group-types/${type.id}`, id: type.id, gone: () => notFound(`/group-types/${type.id}`) };
    },
    '/importers/spreadsheet/files/:fileId': async () => {
      const upload = await t.http.post('/api/1.0/importers/spreadsheet/discover').set(as(ann)).attach('file', Buffer.from('title\ndoomed\n'), 'doomed.csv').expect(201);
      const id = upload.body.file_id as number;
      const path = `/importers/spreadsheet/files/${id}`;
      // An upload has no read of its own: gone means a second deletion finds nothing.
      return { path, id, gone: async () => expect((await c.call('DELETE', path)).status).toBe(404) };
    },
  };

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    c = rawClient(await listen(t), ann.apiKey);
    ({ org, project } = await teamWithProject(c, 'Deletions'));
  });
  afterAll(() => t.close());

  it('has a fixture for every DELETE route the app serves', () => {
    type Layer = { route?: { path: string; methods: Record<string, boolean> } };
    const express = t.app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
    const served = (express.router ?? express._router)!.stack
      .filter((l) => l.route?.methods.delete && l.route.path.startsWith('/api/1.0/'))
      .map((l) => l.route!.path.slice('/api/1.0'.length));
    expect(served.length).toBeGreaterThanOrEqual(Object.keys(fixtures).length);
    const uncovered = served.filter((p) => !(p in fixtures) && !(p in NOT_DELETIONS));
    // A new DELETE route: answer with DeletionRoute/deleted() and add a fixture in this file.
    expect(uncovered).toEqual([]);
  });

  it.each(Object.keys(fixtures))('DELETE %s answers 200 application/json {id, deleted: true}', async (route) => {
    const doomed = await fixtures[route]();
    const res = await c.call('DELETE', doomed.path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ id: doomed.id, deleted: true });
    await doomed.gone();
  });

  it('DELETE /cards/{id}/archive restores the card and answers it (not a deletion)', async () => {
    const archived = await card('Archived');
    await c.json('POST', `/cards/${archived.id}/archive`, undefined, 200);
    const res = await c.call('DELETE', `/cards/${archived.id}/archive`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: archived.id, is_archived: false });
  });

  it('a deletion refused answers problem+json, never an empty body', async () => {
    const res = await c.call('DELETE', `/cards/${project.top_level_card_id}`);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 409 });
  });
});
