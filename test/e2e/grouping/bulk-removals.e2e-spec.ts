import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingWorld, type CardJson, type GroupingClient, type ProjectJson } from './grouping-fixtures.js';

/**
 * Removing the memberships of many cards at once (a group or a group type
 * deleted, a subtree moved out of its groups' scope) touches the cards in one
 * statement and records their stream entries as one batch: one statement per
 * card made a group of 100 000 members take 27 s to delete, and a
 * 100 000-card subtree 37 s to move out of its groups' scope.
 */
describe('removing many memberships at once', () => {
  const MEMBERS = 40;
  let t: TestApp, c: GroupingClient, ann: TestUser, project: ProjectJson, root: number;

  beforeAll(async () => {
    ({ t, c, ann, project, root } = await groupingWorld());
  });
  afterAll(() => t.close());

  /** `MEMBERS` new cards under `parentId`, each in `groupId`. */
  async function members(parentId: number, groupId: number): Promise<CardJson[]> {
    const cards: CardJson[] = [];
    for (let i = 0; i < MEMBERS; i++) cards.push(await c.card(ann, parentId, `m${i}`, { group_id: groupId }));
    return cards;
  }

  /** What `work` sent: the statements that touch cards and those that write stream entries. */
  async function statementsOf(work: () => Promise<unknown>): Promise<{ touches: number; entries: number }> {
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      await work();
      const texts = sent.mock.calls.map(([text]) => String(text));
      return {
        touches: texts.filter((text) => /UPDATE cards\.cards SET updated_at/.test(text)).length,
        entries: texts.filter((text) => /INSERT INTO cards\.card_stream/.test(text)).length,
      };
    } finally {
      sent.mockRestore();
    }
  }

  /** Each card lost its membership of `groupId` for `reason` (one entry each) and was marked changed after `before`. */
  async function expectRemoved(cards: CardJson[], groupId: number, reason: string): Promise<void> {
    for (const card of cards) {
      const now = await c.get(ann, card.id);
      expect(now.groups).toEqual([]);
      expect(Date.parse(now.updated_at)).toBeGreaterThan(Date.parse(card.updated_at));
      const removed = (await c.groupEntries(ann, card.id)).filter((e) => e.data.change === 'removed');
      expect(removed.map((e) => [e.data.group_id, e.data.reason])).toEqual([[groupId, reason]]);
    }
  }

  it('DELETE /groups/{id}: one touch and one batch of entries for every member', async () => {
    const type = await c.type(ann, project.id, 'Labels');
    const group = await c.group(ann, root, type.id, 'doomed');
    const cards = await members(root, group.id);
    const sent = await statementsOf(() => t.http.delete(`${API}/groups/${group.id}`).set(as(ann)).expect(200));
    expect(sent).toEqual({ touches: 1, entries: 1 });
    await expectRemoved(cards, group.id, 'group_deleted');
  });

  it('DELETE /group-types/{id}: the same for the members of all its groups', async () => {
    const type = await c.type(ann, project.id, 'Doomed type');
    const group = await c.group(ann, root, type.id, 'of the type');
    const cards = await members(root, group.id);
    const sent = await statementsOf(() => t.http.delete(`${API}/group-types/${type.id}`).set(as(ann)).expect(200));
    expect(sent).toEqual({ touches: 1, entries: 1 });
    await expectRemoved(cards, group.id, 'group_type_deleted');
  });

  it('a subtree moved out of its groups’ scope: one touch and one batch of entries for the cards that left', async () => {
    const type = await c.type(ann, project.id, 'Columns');
    const board = await c.card(ann, root, 'board');
    const column = await c.group(ann, board.id, type.id, 'column');
    const moved = await c.card(ann, board.id, 'moved');
    const cards = await members(moved.id, column.id);
    const sent = await statementsOf(() => c.relocate(ann, moved.id, { parent_id: root }));
    expect(sent.touches).toBe(1);
    // The move's own entry, then the removals'.
    expect(sent.entries).toBeLessThanOrEqual(2);
    await expectRemoved(cards, column.id, 'moved_out_of_scope');
  });
});
