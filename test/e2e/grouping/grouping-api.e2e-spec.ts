import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Actor } from '../../../src/shared/domain/actor.js';
import { CardsApi } from '../../../src/modules/cards/index.js';
import { GroupingApi } from '../../../src/modules/grouping/index.js';
import { teamWorld } from '../../support/team-world.js';
import { type TestApp, type TestUser } from '../../support/test-app.js';
import { groupingClient, type ProjectJson } from './grouping-fixtures.js';

/** The contract downstream modules (the importer) use; group types come with their field, through CardsApi. */
describe('GroupingApi', () => {
  let t: TestApp, ann: TestUser, project: ProjectJson;
  let api: GroupingApi;
  let cards: CardsApi;
  let actor: Actor;

  beforeAll(async () => {
    ({ t, ann, project } = await teamWorld({ project: 'Project' }));
    api = t.app.get(GroupingApi);
    cards = t.app.get(CardsApi);
    actor = { userId: ann.id, username: ann.username, isAdmin: false, scopes: null };
  });
  afterAll(() => t.close());

  it('finds or creates group types (by name, any case) and groups (by title, any case)', async () => {
    const created = await cards.ensureGroupType(project.id, 'Context', false, actor);
    expect(created).toMatchObject({ projectId: project.id, name: 'Context', oneGroupPerCard: false, attributeId: expect.any(Number) });
    expect(await cards.ensureGroupType(project.id, 'context', true, actor)).toEqual(created);
    const { attributeId: _field, ...type } = created;
    expect(await api.groupTypes(project.id)).toEqual([type]);

    const group = await api.ensureGroup(created.id, project.top_level_card_id, 'Backend', actor);
    expect(group).toMatchObject({ typeId: created.id, title: 'Backend', cardId: project.top_level_card_id, position: 0 });
    expect(await api.ensureGroup(created.id, project.top_level_card_id, 'BACKEND', actor)).toEqual(group);
    const second = await api.ensureGroup(created.id, project.top_level_card_id, 'Frontend', actor);
    expect(second.position).toBe(1);
  });

  it('adds cards to groups as system work, last in each column, recorded as log entries', async () => {
    const c = groupingClient(t);
    const type = await cards.ensureGroupType(project.id, 'Imported', false, actor);
    const group = await api.ensureGroup(type.id, project.top_level_card_id, 'Row 1', actor);
    const card = await c.card(ann, project.top_level_card_id, 'imported card');
    const other = await c.card(ann, project.top_level_card_id, 'second card');
    await api.addCardsToGroups(
      [
        { cardId: card.id, groupId: group.id },
        { cardId: other.id, groupId: group.id },
        { cardId: card.id, groupId: group.id },
      ],
      actor,
      { system: true },
    );
    expect((await c.get(ann, card.id)).groups).toEqual([{ id: group.id, type_id: type.id, title: 'Row 1', card_position: 0 }]);
    expect((await c.get(ann, other.id)).groups).toEqual([{ id: group.id, type_id: type.id, title: 'Row 1', card_position: 1 }]);
    const entries = await c.groupEntries(ann, card.id);
    expect(entries).toEqual([expect.objectContaining({ kind: 'log', data: expect.objectContaining({ change: 'added', group_id: group.id, position: 0 }) })]);
    // A card already in the group stays where it is, and nothing is recorded.
    await api.addCardsToGroups([{ cardId: other.id, groupId: group.id }], actor, { system: true });
    expect(await c.groupEntries(ann, other.id)).toHaveLength(1);
  });
});
