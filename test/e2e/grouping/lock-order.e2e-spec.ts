import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { deadlocks, deadlocksSince, sendWhileHeld } from '../../support/lock-waits.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingWorld, type GroupingClient, type ProjectJson } from './grouping-fixtures.js';
import { describeOnPostgres } from '../../support/on-postgres.js';

/**
 * Grouping's two removals of many memberships at once in the one lock order
 * (docs/ARCHITECTURE.md): each meeting is made to happen every time, a third
 * transaction holding a row until the writes wait, and both answers and
 * pg_stat_database.deadlocks are checked afterwards.
 */
// Two transactions at once: the embedded database runs one at a time.
describeOnPostgres('grouping in the lock order', () => {
  let t: TestApp, ann: TestUser, c: GroupingClient, project: ProjectJson;
  beforeAll(async () => ({ t, c, ann, project } = await groupingWorld()));
  afterAll(() => t.close());

  const send = (method: 'post' | 'put' | 'delete', path: string, body?: object) =>
    (method === 'delete' ? t.http.delete(`${API}${path}`) : t.http[method](`${API}${path}`).send(body)).set(as(ann)).then((r) => r);

  /**
   * A card joins a group after the group's deletion read its members and
   * locked them, and before it locked the group; then a tree write (the
   * card's deletion) holds the card and waits for a row the group's deletion
   * holds. The deletion takes that late joiner with NOWAIT, so it runs again
   * once the tree write is done instead of waiting for it (which waited for
   * the member card the deletion held: a deadlock).
   */
  it('deletes a group while a card that joined late is held by a tree write: no deadlock', async () => {
    const type = await c.type(ann, project.id, 'Status', true);
    const board = await c.card(ann, project.top_level_card_id, 'late board');
    const group = await c.group(ann, board.id, type.id, 'late column');
    const joiner = await c.card(ann, board.id, 'late joiner');
    const member = await c.card(ann, board.id, 'member', { group_id: group.id }); // after the joiner: its deletion shifts it
    const before = await deadlocks(t.app);
    // The group's deletion reads [member] and waits for it (held); the joiner joins, and its
    // deletion holds the board and the joiner and waits for `member`. Let go: the group's
    // deletion takes `member`, locks the type and the group, and finds the joiner.
    const held = { sql: `SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, params: [member.id] };
    const [deleted, joinedThenDeleted] = await sendWhileHeld(t.app, held, [
      () => send('delete', `/groups/${group.id}`),
      async () => {
        expect((await send('post', `/cards/${joiner.id}/add-to-group`, { group_id: group.id })).status).toBe(200);
        return send('delete', `/cards/${joiner.id}`);
      },
    ]);
    expect(deleted.status).toBe(200);
    expect(joinedThenDeleted.status).toBe(200);
    expect((await c.get(ann, member.id)).groups).toEqual([]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
  }, 30_000);

  /**
   * A group type's deletion locks the type before its groups; a membership
   * change holds the type (FOR SHARE) before its group. Deleting the groups
   * first, the deletion would hold one group while it waited for the type,
   * and the membership change hold the type while it waited for that group.
   */
  it('deletes a group type while a card is added to one of its groups: no deadlock', async () => {
    const type = await c.type(ann, project.id, 'Labels', false);
    const root = project.top_level_card_id;
    const first = await c.group(ann, root, type.id, 'first');
    const second = await c.group(ann, root, type.id, 'second'); // locked after `first`
    const card = await c.card(ann, root, 'labelled');
    const before = await deadlocks(t.app);
    // The type's deletion waits for `second` (held), having locked the type and `first`; the
    // addition to `first` waits for the type. Let go: the deletion ends, then the addition.
    const held = { sql: `SELECT 1 FROM grouping.groups WHERE id = $1 FOR UPDATE`, params: [second.id] };
    const [deleted, added] = await sendWhileHeld(t.app, held, [
      () => send('delete', `/group-types/${type.id}`),
      () => send('post', `/cards/${card.id}/add-to-group`, { group_id: first.id }),
    ]);
    expect(deleted.status).toBe(200);
    expect(added.status).toBeLessThan(500);
    expect(added.status).not.toBe(200); // the group went with its type
    expect((await c.get(ann, card.id)).groups).toEqual([]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
  }, 30_000);

  /**
   * A group type's deletion removes memberships, then marks their cards
   * changed. A relationship set on a member card marks that card changed
   * first (a plain UPDATE) and then waits for the card it names, which a
   * relocation into one of the type's groups holds while it waits for the
   * type. Had the deletion only key-shared its members (which lets the set's
   * UPDATE through), it would wait for the set's card when it touches it: a
   * three-way deadlock, seen once in CI's mixed lock-order race. Taking the
   * members with the touch's own lock first makes the set wait at its start.
   */
  it('deletes a group type while a member card\'s relationship set waits for a relocation into the type: no deadlock', async () => {
    const type = await c.type(ann, project.id, 'Stage', false);
    const root = project.top_level_card_id;
    const column = await c.group(ann, root, type.id, 'stage column');
    const member = await c.card(ann, root, 'stage member', { group_id: column.id });
    const named = await c.card(ann, root, 'stage named'); // above `member`: the set waits for it in order
    expect((await send('post', `/projects/${project.id}/attributes`, { name: 'Stage link', type: 'relationships' })).status).toBe(201);
    const before = await deadlocks(t.app);
    // The type's deletion takes `member` and waits for the type (held); the relocation of `named`
    // into `column` holds `named` and waits for the type behind it; the set on `member` waits
    // (for `member` now; before, it touched `member` and waited for `named`). Let go: the
    // deletion gets the type first.
    const held = { sql: `SELECT 1 FROM grouping.group_types WHERE id = $1 FOR UPDATE`, params: [type.id] };
    const [deleted, relocated, linked] = await sendWhileHeld(t.app, held, [
      () => send('delete', `/group-types/${type.id}`),
      () => send('post', `/cards/${named.id}/relocate`, { group_id: column.id }),
      () => send('post', `/cards/${member.id}/attributes/${encodeURIComponent('Stage link')}`, { value: [named.id] }),
    ]);
    expect(deleted.status).toBe(200);
    expect(relocated.status).toBeLessThan(500); // its group went with the type
    expect(linked.status).toBe(200);
    expect((await c.get(ann, member.id)).groups).toEqual([]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
  }, 30_000);

  /**
   * PUT /groups/{id} with a title and a position holds the type and the
   * scope's groups, then changes the group. Renaming and then moving it in a
   * second statement updated the row twice, and the second update checked
   * the group's foreign key again: FOR KEY SHARE on the scope card, after
   * the type and out of the lock order. A deletion of a card under that scope
   * holds the scope card (its parent, step 1) and waits for the type (a
   * member's group's, step 3): a deadlock. One statement takes no card.
   */
  it('renames and moves a group while a card under its scope is deleted: no deadlock', async () => {
    const type = await c.type(ann, project.id, 'Phase', false);
    const board = await c.card(ann, project.top_level_card_id, 'phase board');
    const first = await c.group(ann, board.id, type.id, 'one');
    const second = await c.group(ann, board.id, type.id, 'two'); // locked after `first`
    const member = await c.card(ann, board.id, 'phase member', { group_id: second.id });
    const before = await deadlocks(t.app);
    // The group's update locks the type and `first` and waits for `second` (held); the card's
    // deletion locks the board and the card and waits for the type. Let go: the update moves
    // `first` past `second` and renames it, then the deletion goes on.
    const held = { sql: `SELECT 1 FROM grouping.groups WHERE id = $1 FOR UPDATE`, params: [second.id] };
    const [updated, deleted] = await sendWhileHeld(t.app, held, [
      () => send('put', `/groups/${first.id}`, { title: 'one renamed', position: 1 }),
      () => send('delete', `/cards/${member.id}`),
    ]);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ title: 'one renamed', position: 1 });
    expect(deleted.status).toBe(200);
    expect((await c.groups(ann, board.id, type.id)).filter((g) => g.card_id === board.id).map((g) => [g.title, g.position])).toEqual([
      ['two', 0],
      ['one renamed', 1],
    ]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
  }, 30_000);
});
