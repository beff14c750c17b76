import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { listen, rawClient, teamWithProject, type RawClient, type RawProject } from './raw-client.js';

interface GroupJson {
  id: number;
  type_id: number;
  title: string;
  card_id: number;
  position: number;
}

/** Issue 14.5: GET /models/{id} and GET /group-types/{id}/groups, visible as their siblings are. */
describe('compatibility: GET /models/{id} and GET /group-types/{id}/groups', () => {
  let t: TestApp;
  let ann: RawClient;
  let vic: RawClient;
  let eve: RawClient;
  let project: RawProject;
  let evesProject: RawProject;

  const status = async (c: RawClient, path: string) => (await c.call('GET', path)).status;

  beforeAll(async () => {
    t = await createTestApp();
    const origin = await listen(t);
    const vicUser: TestUser = await t.user();
    ann = rawClient(origin, (await t.user()).apiKey);
    vic = rawClient(origin, vicUser.apiKey);
    eve = rawClient(origin, (await t.user()).apiKey);
    let org: number;
    ({ org, project } = await teamWithProject(ann, 'Ann'));
    await ann.json('POST', `/organizations/${org}/members`, { user: `@${vicUser.username}`, role: 'viewer' }, 201);
    ({ project: evesProject } = await teamWithProject(eve, 'Eve'));
  });
  afterAll(() => t.close());

  describe('GET /models/{id}', () => {
    it('answers the model to every member of its team, a viewer included', async () => {
      const bug = await ann.json<{ id: number }>('POST', `/projects/${project.id}/models`, { name: 'Bug' }, 201);
      const expected = { id: bug.id, project_id: project.id, name: 'Bug' };
      expect(await ann.json('GET', `/models/${bug.id}`, undefined, 200)).toMatchObject(expected);
      expect(await vic.json('GET', `/models/${bug.id}`, undefined, 200)).toMatchObject(expected);
      const listed = await ann.json<{ id: number }[]>('GET', `/projects/${project.id}/models`, undefined, 200);
      expect(listed.find((m) => m.id === bug.id)).toEqual(await ann.json('GET', `/models/${bug.id}`, undefined, 200));
    });

    it("is 404 for another team's model, both ways, and for ids that are not models", async () => {
      const ours = await ann.json<{ id: number }>('POST', `/projects/${project.id}/models`, { name: 'Story' }, 201);
      const theirs = await eve.json<{ id: number }>('POST', `/projects/${evesProject.id}/models`, { name: 'Secret' }, 201);
      expect(await status(eve, `/models/${ours.id}`)).toBe(404);
      expect(await status(ann, `/models/${theirs.id}`)).toBe(404);
      for (const id of ['99999999', '0', 'abc', '1e3']) expect({ id, status: await status(ann, `/models/${id}`) }).toEqual({ id, status: 404 });
      const res = await ann.call('GET', `/models/${theirs.id}`);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    });
  });

  describe('GET /group-types/{id}/groups', () => {
    it('lists the groups of the type in every scope, and only that type', async () => {
      const root = project.top_level_card_id;
      const status = await ann.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name: 'Status' }, 201);
      const labels = await ann.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name: 'Labels' }, 201);
      const board = await ann.json<{ id: number }>('POST', `/cards/${root}/children`, { title: 'Board' }, 201);
      const group = (scope: number, type: number, title: string) =>
        ann.json<GroupJson>('POST', `/cards/${scope}/groups`, { type_id: type, title }, 201);
      const done = await group(root, status.id, 'Done');
      const onBoard = await group(board.id, status.id, 'Board column');
      await group(root, labels.id, 'Urgent');
      const todo = await ann.json<GroupJson>('POST', `/cards/${root}/groups`, { type_id: status.id, title: 'Todo', position: 0 }, 201);

      const listed = await ann.json<GroupJson[]>('GET', `/group-types/${status.id}/groups`, undefined, 200);
      // By scope card (the top-level card first), then position within it.
      expect(listed.map((g) => g.title)).toEqual(['Todo', 'Done', 'Board column']);
      expect(listed).toEqual([todo, { ...done, position: 1 }, onBoard].map((g) => expect.objectContaining(g)));
      expect(await vic.json('GET', `/group-types/${status.id}/groups`, undefined, 200)).toEqual(listed);

      await ann.json('DELETE', `/groups/${done.id}`, undefined, 200);
      const after = await ann.json<GroupJson[]>('GET', `/group-types/${status.id}/groups`, undefined, 200);
      expect(after.map((g) => g.title)).toEqual(['Todo', 'Board column']);
    });

    it('answers [] for a type without groups', async () => {
      const empty = await ann.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name: 'Empty' }, 201);
      expect(await ann.json('GET', `/group-types/${empty.id}/groups`, undefined, 200)).toEqual([]);
    });

    it("is 404 for another team's group type, both ways, for a deleted type and for ids that are not types", async () => {
      const ours = await ann.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name: 'Ours' }, 201);
      const theirs = await eve.json<{ id: number }>('POST', `/projects/${evesProject.id}/group-types`, { name: 'Theirs' }, 201);
      await eve.json('POST', `/cards/${evesProject.top_level_card_id}/groups`, { type_id: theirs.id, title: 'Hidden' }, 201);
      expect(await status(eve, `/group-types/${ours.id}/groups`)).toBe(404);
      expect(await status(ann, `/group-types/${theirs.id}/groups`)).toBe(404);
      const gone = await ann.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name: 'Gone' }, 201);
      await ann.json('DELETE', `/group-types/${gone.id}`, undefined, 200);
      expect(await status(ann, `/group-types/${gone.id}/groups`)).toBe(404);
      for (const id of ['99999999', '0', '-1']) {
        expect({ id, status: await status(ann, `/group-types/${id}/groups`) }).toEqual({ id, status: 404 });
      }
    });
  });
});
