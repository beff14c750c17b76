import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingClient, type CardJson, type GroupJson, type GroupTypeJson, type ProjectJson } from './grouping-fixtures.js';

describe('card memberships', () => {
  let t: TestApp;
  let c: ReturnType<typeof groupingClient>;
  let ann: TestUser;
  let project: ProjectJson;
  let root: number;
  let status: GroupTypeJson; // one group per card: columns
  let labels: GroupTypeJson; // several per card
  let todo: GroupJson;
  let doing: GroupJson;
  let done: GroupJson;
  let bug: GroupJson;
  let urgent: GroupJson;

  beforeAll(async () => {
    t = await createTestApp();
    c = groupingClient(t);
    ann = await t.user();
    const org = await c.team(ann, 'Acme');
    project = await c.project(ann, org, 'Board');
    root = project.top_level_card_id;
    status = await c.type(ann, project.id, 'Status', true);
    labels = await c.type(ann, project.id, 'Labels', false);
    todo = await c.group(ann, root, status.id, 'To do');
    doing = await c.group(ann, root, status.id, 'Doing');
    done = await c.group(ann, root, status.id, 'Done');
    bug = await c.group(ann, root, labels.id, 'bug');
    urgent = await c.group(ann, root, labels.id, 'urgent');
  });
  afterAll(() => t.close());

  it('puts a new card in the group named by group_id, last in its column', async () => {
    const a = await c.card(ann, root, 'a', { group_id: todo.id });
    const b = await c.card(ann, root, 'b', { group_id: todo.id });
    expect(a.groups).toEqual([{ id: todo.id, type_id: status.id, title: 'To do', card_position: 0 }]);
    expect(b.groups).toEqual([{ id: todo.id, type_id: status.id, title: 'To do', card_position: 1 }]);
    const entries = await c.groupEntries(ann, b.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      kind: 'activity',
      user_id: ann.id,
      data: { change: 'added', group_id: todo.id, group_title: 'To do', type_id: status.id, position: 1 },
    });
  });

  it('adds labels with add-to-group and refuses a second column', async () => {
    const card: CardJson = await c.card(ann, root, 'labelled', { group_id: doing.id });
    const res = await c.addToGroup(ann, card.id, { group_id: bug.id });
    expect(res.body.id).toBe(card.id);
    await c.addToGroup(ann, card.id, { group_id: urgent.id, position: 0 });
    expect(await c.groupIdsOf(ann, card.id, labels.id)).toEqual([bug.id, urgent.id]);
    const conflict = await c.addToGroup(ann, card.id, { group_id: done.id }, 409);
    expect(conflict.body.type).toBe('GROUPING.ONE_GROUP_PER_CARD');
    expect(await c.groupIdsOf(ann, card.id, status.id)).toEqual([doing.id]);
  });

  it('moves a card between columns with relocate', async () => {
    const card = await c.card(ann, root, 'mover', { group_id: todo.id });
    const res = await c.relocate(ann, card.id, { group_id: done.id, position: 0 });
    expect(res.body.groups.filter((g: { type_id: number }) => g.type_id === status.id)).toEqual([
      { id: done.id, type_id: status.id, title: 'Done', card_position: 0 },
    ]);
    await t.http.get(`${API}/cards/${card.id}`).set(as(ann)).expect(200);
  });
});
