import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingWorld, type CardJson, type GroupingClient, type GroupJson, type GroupTypeJson, type ProjectJson } from './grouping-fixtures.js';

describe('card memberships', () => {
  let t: TestApp, c: GroupingClient, project: ProjectJson, root: number;
  let ann: TestUser, vic: TestUser, eve: TestUser;
  let status: GroupTypeJson; // one group per card: columns
  let labels: GroupTypeJson; // several per card
  let todo: GroupJson;
  let doing: GroupJson;
  let done: GroupJson;
  let bug: GroupJson;
  let urgent: GroupJson;
  let epic: CardJson; // a card with its own columns for the cards under it
  let sprint: GroupJson; // status group scoped at epic
  let other: ProjectJson; // another project of the same team
  let otherGroup: GroupJson;
  let evilGroup: GroupJson;

  beforeAll(async () => {
    let org: number;
    ({ t, c, ann, team: org, project, root, users: { vic, eve } } = await groupingWorld({ users: { vic: 'viewer', eve: 'outsider' } }));
    status = await c.type(ann, project.id, 'Status', true);
    labels = await c.type(ann, project.id, 'Labels', false);
    todo = await c.group(ann, root, status.id, 'To do');
    doing = await c.group(ann, root, status.id, 'Doing');
    done = await c.group(ann, root, status.id, 'Done');
    bug = await c.group(ann, root, labels.id, 'bug');
    urgent = await c.group(ann, root, labels.id, 'urgent');
    epic = await c.card(ann, root, 'epic');
    sprint = await c.group(ann, epic.id, status.id, 'Sprint');
    other = await c.project(ann, org, 'Other');
    const otherType = await c.type(ann, other.id, 'Status', true);
    otherGroup = await c.group(ann, other.top_level_card_id, otherType.id, 'To do');
    const evilOrg = await c.team(eve, 'Evil');
    const evil = await c.project(eve, evilOrg, 'Evil');
    const evilType = await c.type(eve, evil.id, 'Status', true);
    evilGroup = await c.group(eve, evil.top_level_card_id, evilType.id, 'To do');
  });
  afterAll(() => t.close());

  /** What a failed request must leave untouched. */
  const snapshot = async (cardId: number) => {
    const card = await c.get(ann, cardId);
    return { groups: card.groups, updated_at: card.updated_at, parent_id: card.parent_id, position: card.position, stream: await c.stream(ann, cardId) };
  };

  describe('group_id on creation', () => {
    it('puts the new card last in the group, and says so in its stream', async () => {
      const a = await c.card(ann, root, 'a', { group_id: todo.id });
      const b = await c.card(ann, root, 'b', { group_id: String(todo.id) });
      expect(a.groups).toEqual([{ id: todo.id, type_id: status.id, title: 'To do', card_position: 0 }]);
      expect(b.groups).toEqual([{ id: todo.id, type_id: status.id, title: 'To do', card_position: 1 }]);
      const entries = await c.groupEntries(ann, b.id);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        kind: 'activity',
        user_id: ann.id,
        data: { change: 'added', group_id: todo.id, group_title: 'To do', type_id: status.id, type_name: 'Status', position: 1 },
      });
      await c.removeFromGroup(ann, a.id, { group_id: todo.id });
      await c.removeFromGroup(ann, b.id, { group_id: todo.id });
    });

    it('takes group_id: null as no group', async () => {
      const card = await c.card(ann, root, 'no group', { group_id: null });
      expect(card.groups).toEqual([]);
    });

    it('accepts a group scoped at the new card’s parent or above, not elsewhere', async () => {
      const underEpic = await c.card(ann, epic.id, 'story', { group_id: sprint.id });
      expect(underEpic.groups.map((g) => g.id)).toEqual([sprint.id]);
      const inherited = await c.card(ann, epic.id, 'story 2', { group_id: bug.id });
      expect(inherited.groups.map((g) => g.id)).toEqual([bug.id]);
      await c.removeFromGroup(ann, inherited.id, { group_id: bug.id });
    });

    it.each([
      ['a group scoped at a card it is not under', () => sprint.id, /not under/],
      ['a group of another project', () => otherGroup.id, /another project|card's project/],
      ["another team's group", () => evilGroup.id, /no such group/],
      ['an unknown group', () => 999999, /no such group/],
      ['a malformed id', () => 'abc', /positive integer/],
      ['a negative id', () => -3, /positive integer/],
    ])('refuses %s with 400 naming group_id, creating nothing', async (_label, groupId, message) => {
      const before = (await t.http.get(`${API}/cards/${root}/children`).set(as(ann)).expect(200)).body.length;
      const res = await t.http.post(`${API}/cards/${root}/children`).set(as(ann)).send({ title: 'x', group_id: groupId() }).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'group_id', message: expect.stringMatching(message) })]);
      expect((await t.http.get(`${API}/cards/${root}/children`).set(as(ann)).expect(200)).body.length).toBe(before);
    });
  });

  describe('add-to-group', () => {
    it('adds labels at a position, and refuses a second column with 409', async () => {
      const card = await c.card(ann, root, 'labelled', { group_id: doing.id });
      const res = await c.addToGroup(ann, card.id, { group_id: bug.id });
      expect(res.body).toMatchObject({ id: card.id, title: 'labelled', project_id: project.id });
      await c.addToGroup(ann, card.id, { group_id: urgent.id, position: 0 });
      expect(await c.groupIdsOf(ann, card.id, labels.id)).toEqual([bug.id, urgent.id]);

      const before = await snapshot(card.id);
      const conflict = await c.addToGroup(ann, card.id, { group_id: done.id }, 409);
      expect(conflict.body).toMatchObject({ status: 409, type: 'GROUPING.ONE_GROUP_PER_CARD' });
      expect(await snapshot(card.id)).toEqual(before);
      await c.removeFromType(ann, card.id, { type_id: labels.id });
      await c.removeFromType(ann, card.id, { type_id: status.id });
    });

    it('takes form fields', async () => {
      const card = await c.card(ann, root, 'form');
      const res = await t.http
        .post(`${API}/cards/${card.id}/add-to-group`)
        .set(as(ann))
        .type('form')
        .send(`group_id=${urgent.id}&position=0`)
        .expect(200);
      expect(res.body.groups).toEqual([{ id: urgent.id, type_id: labels.id, title: 'urgent', card_position: 0 }]);
      await t.http.post(`${API}/cards/${card.id}/remove-from-group`).set(as(ann)).type('form').send(`group_id=${urgent.id}`).expect(200);
      expect((await c.get(ann, card.id)).groups).toEqual([]);
    });

    it('puts a card in its first column of a one-group type', async () => {
      const card = await c.card(ann, root, 'first column');
      const res = await c.addToGroup(ann, card.id, { group_id: doing.id });
      expect(res.body.groups).toEqual([{ id: doing.id, type_id: status.id, title: 'Doing', card_position: 0 }]);
      await c.removeFromGroup(ann, card.id, { group_id: doing.id });
    });

    it('keeps a member where it is unless a position is given, then moves it there', async () => {
      const cards = [await c.card(ann, root, 'l0'), await c.card(ann, root, 'l1'), await c.card(ann, root, 'l2')];
      for (const x of cards) await c.addToGroup(ann, x.id, { group_id: urgent.id });
      const ids = cards.map((x) => x.id);
      expect(await c.column(ann, project.id, urgent.id)).toEqual(ids);
      const entries = (await c.groupEntries(ann, cards[0].id)).length;
      await c.addToGroup(ann, cards[0].id, { group_id: urgent.id });
      expect(await c.column(ann, project.id, urgent.id)).toEqual(ids);
      expect((await c.groupEntries(ann, cards[0].id)).length).toBe(entries);
      await c.addToGroup(ann, cards[0].id, { group_id: urgent.id, position: 99 });
      expect(await c.column(ann, project.id, urgent.id)).toEqual([ids[1], ids[2], ids[0]]);
      const [latest] = await c.groupEntries(ann, cards[0].id);
      expect(latest.data).toMatchObject({ change: 'reordered', from_position: 0, position: 2 });
      for (const x of cards) await c.removeFromGroup(ann, x.id, { group_id: urgent.id });
    });

    it('clamps any integer position to the column: a negative one is first, a huge one last', async () => {
      const cards = [await c.card(ann, root, 'm0'), await c.card(ann, root, 'm1'), await c.card(ann, root, 'm2')];
      for (const x of cards) await c.addToGroup(ann, x.id, { group_id: urgent.id });
      const ids = cards.map((x) => x.id);
      await c.addToGroup(ann, cards[2].id, { group_id: urgent.id, position: -1 });
      expect(await c.column(ann, project.id, urgent.id)).toEqual([ids[2], ids[0], ids[1]]);
      await c.addToGroup(ann, cards[2].id, { group_id: urgent.id, position: 99_999_999_999 });
      expect(await c.column(ann, project.id, urgent.id)).toEqual(ids);
      // Past the safe integers too: an integer all the same (2 ** 53 used to be refused).
      await c.addToGroup(ann, cards[2].id, { group_id: urgent.id, position: -(2 ** 60) });
      expect(await c.column(ann, project.id, urgent.id)).toEqual([ids[2], ids[0], ids[1]]);
      await c.addToGroup(ann, cards[2].id, { group_id: urgent.id, position: 2 ** 53 });
      expect(await c.column(ann, project.id, urgent.id)).toEqual(ids);
      for (const x of cards) await c.removeFromGroup(ann, x.id, { group_id: urgent.id });
    });

    it.each([
      ['a group scoped at a card it is not under', () => ({ group_id: sprint.id }), 'group_id'],
      ['a group of another project', () => ({ group_id: otherGroup.id }), 'group_id'],
      ["another team's group", () => ({ group_id: evilGroup.id }), 'group_id'],
      ['an unknown group', () => ({ group_id: 999999 }), 'group_id'],
      ['no group_id', () => ({}), 'group_id'],
      ['a string group_id', () => ({ group_id: 'bug' }), 'group_id'],
      ['a position in exponent form as text', () => ({ group_id: bug.id, position: '1e20' }), 'position'],
      ['a fractional position', () => ({ group_id: bug.id, position: 1.5 }), 'position'],
      ['an unknown property', () => ({ group_id: bug.id, colour: 'red' }), 'colour'],
    ])('refuses %s with 400 naming the property, changing nothing', async (_label, body, field) => {
      const card = await c.card(ann, root, 'unchanged', { group_id: todo.id });
      const before = await snapshot(card.id);
      const res = await c.addToGroup(ann, card.id, body(), 400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await snapshot(card.id)).toEqual(before);
      await c.removeFromGroup(ann, card.id, { group_id: todo.id });
    });

    it('refuses the top-level card, which is under no scope', async () => {
      const res = await c.addToGroup(ann, root, { group_id: bug.id }, 400);
      expect(res.body.errors[0].field).toBe('group_id');
    });
  });

  describe('remove-from-group and remove-from-group-type', () => {
    it('takes the card out and closes the gap in the column', async () => {
      const feature = await c.group(ann, root, labels.id, 'feature');
      const cards = [await c.card(ann, root, 'r0'), await c.card(ann, root, 'r1'), await c.card(ann, root, 'r2')];
      const ids = cards.map((x) => x.id);
      for (const id of ids) await c.addToGroup(ann, id, { group_id: feature.id });
      const res = await c.removeFromGroup(ann, ids[1], { group_id: feature.id });
      expect(res.body.groups).toEqual([]);
      expect(await c.column(ann, project.id, feature.id)).toEqual([ids[0], ids[2]]);
      const [entry] = await c.groupEntries(ann, ids[1]);
      expect(entry.data).toMatchObject({ change: 'removed', group_id: feature.id, group_title: 'feature', from_position: 1 });
    });

    it('answers 200 and changes nothing when the card is not in the group', async () => {
      const card = await c.card(ann, root, 'not a member');
      const entries = (await c.stream(ann, card.id)).length;
      const res = await c.removeFromGroup(ann, card.id, { group_id: bug.id });
      expect(res.body.groups).toEqual([]);
      expect((await c.stream(ann, card.id)).length).toBe(entries);
    });

    it('takes a card out of every group of a type, leaving other types', async () => {
      const card = await c.card(ann, root, 'many labels', { group_id: todo.id });
      await c.addToGroup(ann, card.id, { group_id: bug.id });
      await c.addToGroup(ann, card.id, { group_id: urgent.id });
      const res = await c.removeFromType(ann, card.id, { type_id: labels.id });
      expect(res.body.groups.map((g: { id: number }) => g.id)).toEqual([todo.id]);
      const removed = (await c.groupEntries(ann, card.id)).filter((e) => e.data.change === 'removed');
      expect(removed.map((e) => e.data.group_id).sort()).toEqual([bug.id, urgent.id].sort());
      await c.removeFromType(ann, card.id, { type_id: status.id });
      expect((await c.get(ann, card.id)).groups).toEqual([]);
    });

    it.each([
      ['remove-from-group', 'group of another project', () => ({ group_id: otherGroup.id }), 'group_id'],
      ['remove-from-group', "another team's group", () => ({ group_id: evilGroup.id }), 'group_id'],
      ['remove-from-group', 'no group_id', () => ({}), 'group_id'],
      ['remove-from-group-type', 'type of another project', () => ({ type_id: otherGroup.type_id }), 'type_id'],
      ['remove-from-group-type', "another team's type", () => ({ type_id: evilGroup.type_id }), 'type_id'],
      ['remove-from-group-type', 'an unknown type', () => ({ type_id: 999999 }), 'type_id'],
      ['remove-from-group-type', 'no type_id', () => ({}), 'type_id'],
    ])('%s refuses a %s with 400 naming the property', async (op, _label, body, field) => {
      const card = await c.card(ann, root, 'kept', { group_id: todo.id });
      const before = await snapshot(card.id);
      const res = await t.http.post(`${API}/cards/${card.id}/${op}`).set(as(ann)).send(body()).expect(400);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await snapshot(card.id)).toEqual(before);
      await c.removeFromGroup(ann, card.id, { group_id: todo.id });
    });
  });

  describe('relocate with group_id', () => {
    it('moves a card into another column at a position, leaving its old one, without touching its siblings', async () => {
      const a = await c.card(ann, root, 'ra', { group_id: doing.id });
      const b = await c.card(ann, root, 'rb', { group_id: doing.id });
      const mover = await c.card(ann, root, 'mover', { group_id: todo.id });
      const siblingPosition = mover.position;
      const res = await c.relocate(ann, mover.id, { group_id: doing.id, position: 1 });
      expect(res.body.position).toBe(siblingPosition);
      expect(res.body.parent_id).toBe(root);
      expect(res.body.groups).toEqual([{ id: doing.id, type_id: status.id, title: 'Doing', card_position: 1 }]);
      expect(await c.column(ann, project.id, doing.id)).toEqual([a.id, mover.id, b.id]);
      const changes = (await c.groupEntries(ann, mover.id)).map((e) => [e.data.change, e.data.group_id]);
      expect(changes.slice(0, 2)).toEqual(
        expect.arrayContaining([
          ['removed', todo.id],
          ['added', doing.id],
        ]),
      );
      // Within the column: a position moves it there; the others shift.
      await c.relocate(ann, mover.id, { group_id: doing.id, position: 0 });
      expect(await c.column(ann, project.id, doing.id)).toEqual([mover.id, a.id, b.id]);
      await c.relocate(ann, mover.id, { group_id: doing.id });
      expect(await c.column(ann, project.id, doing.id)).toEqual([mover.id, a.id, b.id]);
      for (const x of [a, b, mover]) await c.removeFromType(ann, x.id, { type_id: status.id });
    });

    it('makes the group the card’s only group of a several-groups type', async () => {
      const card = await c.card(ann, root, 'relabel', { group_id: bug.id });
      await c.addToGroup(ann, card.id, { group_id: urgent.id });
      await c.relocate(ann, card.id, { group_id: bug.id });
      expect(await c.groupIdsOf(ann, card.id, labels.id)).toEqual([bug.id]);
      await c.removeFromGroup(ann, card.id, { group_id: bug.id });
    });

    it('still moves the card among its siblings when no group_id is given', async () => {
      const parent = await c.card(ann, root, 'parent');
      const k0 = await c.card(ann, parent.id, 'k0', { group_id: todo.id });
      const k1 = await c.card(ann, parent.id, 'k1', { group_id: todo.id });
      const res = await c.relocate(ann, k1.id, { position: 0 });
      expect(res.body.position).toBe(0);
      expect(res.body.groups.map((g: { id: number }) => g.id)).toEqual([todo.id]);
      expect(await c.column(ann, project.id, todo.id)).toEqual([k0.id, k1.id]);
      for (const x of [k0, k1]) await c.removeFromGroup(ann, x.id, { group_id: todo.id });
    });

    it.each([
      ['a group scoped at a card it is not under', () => ({ group_id: sprint.id })],
      ['a group of another project', () => ({ group_id: otherGroup.id })],
      ["another team's group", () => ({ group_id: evilGroup.id })],
      ['an unknown group', () => ({ group_id: 999999 })],
      ['a malformed group_id', () => ({ group_id: 'x' })],
    ])('refuses %s with 400 naming group_id, moving nothing', async (_label, body) => {
      const card = await c.card(ann, root, 'stays', { group_id: todo.id });
      const before = await snapshot(card.id);
      const res = await c.relocate(ann, card.id, { ...body(), position: 0 }, 400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'group_id' })]);
      expect(await snapshot(card.id)).toEqual(before);
      await c.removeFromGroup(ann, card.id, { group_id: todo.id });
    });
  });

  describe('relocate to another parent', () => {
    it('checks group_id against where the card is going: a column of the new parent works in the same request', async () => {
      const boardA = await c.card(ann, root, 'board A');
      const boardB = await c.card(ann, root, 'board B');
      const colA = await c.group(ann, boardA.id, status.id, 'A column');
      const colB = await c.group(ann, boardB.id, status.id, 'B column');
      const stay = await c.card(ann, boardA.id, 'stays', { group_id: colA.id });
      const mover = await c.card(ann, boardA.id, 'mover', { group_id: colA.id });
      const last = await c.card(ann, boardA.id, 'last', { group_id: colA.id });
      const there = await c.card(ann, boardB.id, 'there', { group_id: colB.id });
      await c.addToGroup(ann, mover.id, { group_id: bug.id });

      const res = await c.relocate(ann, mover.id, { parent_id: boardB.id, group_id: colB.id, position: 0 });
      expect(res.body.parent_id).toBe(boardB.id);
      expect(res.body.groups.map((g: { id: number }) => g.id)).toEqual([colB.id, bug.id]);
      expect(await c.column(ann, project.id, colA.id)).toEqual([stay.id, last.id]);
      expect(await c.column(ann, project.id, colB.id)).toEqual([mover.id, there.id]);
      const back = await c.relocate(ann, mover.id, { parent_id: boardA.id, group_id: colA.id, position: 1 });
      expect(back.body.parent_id).toBe(boardA.id);
      expect(await c.column(ann, project.id, colA.id)).toEqual([stay.id, mover.id, last.id]);
      expect(await c.column(ann, project.id, colB.id)).toEqual([there.id]);
      await c.removeFromGroup(ann, mover.id, { group_id: bug.id });
    });

    it('drops the memberships of a card moved away from their scope (see scope-on-move.e2e-spec.ts)', async () => {
      const boardA = await c.card(ann, root, 'board E');
      const boardB = await c.card(ann, root, 'board F');
      const colA = await c.group(ann, boardA.id, status.id, 'E column');
      const card = await c.card(ann, boardA.id, 'wanderer', { group_id: colA.id });
      await c.addToGroup(ann, card.id, { group_id: bug.id });
      const res = await c.relocate(ann, card.id, { parent_id: boardB.id });
      expect(res.body.groups.map((g: { id: number }) => g.id)).toEqual([bug.id]);
      expect((await c.groups(ann, boardB.id, status.id)).map((g) => g.id)).not.toContain(colA.id);
      await c.addToGroup(ann, card.id, { group_id: colA.id }, 400);
      await c.removeFromGroup(ann, card.id, { group_id: bug.id });
      expect(await c.groupIdsOf(ann, card.id)).toEqual([]);
    });

    it('checks group_id against where the card is going: a group of the old parent → 400, nothing moved', async () => {
      const boardA = await c.card(ann, root, 'board C');
      const boardB = await c.card(ann, root, 'board D');
      const colA = await c.group(ann, boardA.id, status.id, 'C column');
      const card = await c.card(ann, boardA.id, 'card', { group_id: colA.id });
      const before = await snapshot(card.id);
      const res = await c.relocate(ann, card.id, { parent_id: boardB.id, group_id: colA.id }, 400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'group_id', message: expect.stringMatching(/not under/) })]);
      expect(await snapshot(card.id)).toEqual(before);
      expect(await c.column(ann, project.id, colA.id)).toEqual([card.id]);
    });
  });

  it('keeps every column dense and in the expected order through a series of moves', async () => {
    const cols = [todo, doing, done];
    const cards: number[] = [];
    for (let i = 0; i < 6; i++) cards.push((await c.card(ann, root, `s${i}`, { group_id: todo.id })).id);
    // The model: each column's card ids in order.
    const model = new Map<number, number[]>(cols.map((g) => [g.id, g.id === todo.id ? [...cards] : []]));
    const place = (card: number, group: number, position?: number) => {
      for (const list of model.values()) {
        const i = list.indexOf(card);
        if (i >= 0) list.splice(i, 1);
      }
      const list = model.get(group)!;
      const at = position === undefined ? list.length : Math.min(position, list.length);
      list.splice(at, 0, card);
    };
    const moves: Array<[number, number, number | undefined]> = [
      [cards[0], doing.id, 0],
      [cards[1], doing.id, 0],
      [cards[2], doing.id, 1],
      [cards[3], done.id, undefined],
      [cards[0], doing.id, 2],
      [cards[4], done.id, 0],
      [cards[1], todo.id, 0],
      [cards[5], doing.id, 10],
      [cards[2], doing.id, 0],
      [cards[3], doing.id, 1],
      [cards[4], todo.id, 2],
    ];
    for (const [card, group, position] of moves) {
      await c.relocate(ann, card, position === undefined ? { group_id: group } : { group_id: group, position });
      place(card, group, position);
    }
    // Removals and deletions close gaps too.
    await c.removeFromGroup(ann, cards[2], { group_id: doing.id });
    model.get(doing.id)!.splice(model.get(doing.id)!.indexOf(cards[2]), 1);
    await t.http.delete(`${API}/cards/${cards[0]}`).set(as(ann)).expect(200);
    model.get(doing.id)!.splice(model.get(doing.id)!.indexOf(cards[0]), 1);
    const alive = cards.filter((id) => id !== cards[0]);
    for (const g of cols) expect(await c.column(ann, project.id, g.id)).toEqual(model.get(g.id));
    for (const id of alive) await c.removeFromType(ann, id, { type_id: status.id });
  });

  it('closes the gaps a deleted subtree leaves in columns', async () => {
    const review = await c.group(ann, root, status.id, 'Review');
    const chore = await c.group(ann, root, labels.id, 'chore');
    const first = await c.card(ann, root, 'first', { group_id: review.id });
    const parent = await c.card(ann, root, 'doomed', { group_id: review.id });
    const kid = await c.card(ann, parent.id, 'doomed kid', { group_id: review.id });
    const last = await c.card(ann, root, 'last', { group_id: review.id });
    await c.addToGroup(ann, kid.id, { group_id: chore.id });
    await c.addToGroup(ann, last.id, { group_id: chore.id });
    await t.http.delete(`${API}/cards/${parent.id}`).set(as(ann)).expect(200);
    expect(await c.column(ann, project.id, review.id)).toEqual([first.id, last.id]);
    expect((await c.get(ann, last.id)).groups).toEqual([
      { id: review.id, type_id: status.id, title: 'Review', card_position: 1 },
      { id: chore.id, type_id: labels.id, title: 'chore', card_position: 0 },
    ]);
  });

  it('marks the card updated on every membership change', async () => {
    const card = await c.card(ann, root, 'touched');
    await new Promise((r) => setTimeout(r, 5));
    const res = await c.addToGroup(ann, card.id, { group_id: bug.id });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(card.updated_at).getTime());
    await c.removeFromGroup(ann, card.id, { group_id: bug.id });
  });

  describe('access', () => {
    it('lets a viewer read groups but not change memberships (403)', async () => {
      const card = await c.card(ann, root, 'watched', { group_id: todo.id });
      expect((await c.get(vic, card.id)).groups.map((g) => g.id)).toEqual([todo.id]);
      const before = await snapshot(card.id);
      await c.addToGroup(vic, card.id, { group_id: bug.id }, 403);
      await c.removeFromGroup(vic, card.id, { group_id: todo.id }, 403);
      await c.removeFromType(vic, card.id, { type_id: status.id }, 403);
      await c.relocate(vic, card.id, { group_id: doing.id }, 403);
      expect(await snapshot(card.id)).toEqual(before);
      await c.removeFromGroup(ann, card.id, { group_id: todo.id });
    });

    it('hides cards from users outside the team (404), even with their own group ids', async () => {
      const card = await c.card(ann, root, 'secret', { group_id: todo.id });
      const before = await snapshot(card.id);
      await c.addToGroup(eve, card.id, { group_id: evilGroup.id }, 404);
      await c.removeFromGroup(eve, card.id, { group_id: todo.id }, 404);
      await c.removeFromType(eve, card.id, { type_id: status.id }, 404);
      await c.relocate(eve, card.id, { group_id: evilGroup.id }, 404);
      await t.http.post(`${API}/cards/abc/add-to-group`).set(as(ann)).send({ group_id: bug.id }).expect(404);
      await t.http.post(`${API}/cards/999999/add-to-group`).set(as(ann)).send({ group_id: bug.id }).expect(404);
      await t.http.post(`${API}/cards/${card.id}/add-to-group`).send({ group_id: bug.id }).expect(401);
      expect(await snapshot(card.id)).toEqual(before);
      await c.removeFromGroup(ann, card.id, { group_id: todo.id });
    });
  });
});
