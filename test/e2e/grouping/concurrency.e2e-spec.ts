import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingWorld, type GroupingClient, type GroupTypeJson, type ProjectJson } from './grouping-fixtures.js';
import { itOnPostgres } from '../../support/on-postgres.js';

/** Membership positions under concurrent requests: never a duplicate, never a gap, never a lost card. */
describe('grouping under concurrency', () => {
  let t: TestApp, c: GroupingClient, ann: TestUser, project: ProjectJson, root: number;
  let status: GroupTypeJson;
  let labels: GroupTypeJson;

  beforeAll(async () => {
    ({ t, c, ann, project, root } = await groupingWorld());
    status = await c.type(ann, project.id, 'Status', true);
    labels = await c.type(ann, project.id, 'Labels');
  });
  afterAll(() => t.close());

  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

  it('moves many cards into one column at once: each lands exactly once, positions 0..n-1', async () => {
    const from = await c.group(ann, root, status.id, 'From');
    const to = await c.group(ann, root, status.id, 'To');
    const already: number[] = [];
    for (let i = 0; i < 3; i++) already.push((await c.card(ann, root, `there ${i}`, { group_id: to.id })).id);
    const movers: number[] = [];
    for (let i = 0; i < 16; i++) movers.push((await c.card(ann, root, `mover ${i}`, { group_id: from.id })).id);

    const results = await Promise.all(
      movers.map((id, i) => t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ group_id: to.id, position: i % 4 })),
    );
    expect(results.map((r) => r.status)).toEqual(movers.map(() => 200));
    expect(await c.column(ann, project.id, from.id)).toEqual([]);
    const column = await c.column(ann, project.id, to.id);
    expect(sorted(column)).toEqual(sorted([...already, ...movers]));
    // The cards that were there keep their relative order.
    expect(column.filter((id) => already.includes(id))).toEqual(already);
  });

  it('reorders one column from many requests at once', async () => {
    const col = await c.group(ann, root, status.id, 'Busy');
    const cards: number[] = [];
    for (let i = 0; i < 12; i++) cards.push((await c.card(ann, root, `busy ${i}`, { group_id: col.id })).id);
    const results = await Promise.all(
      cards.map((id, i) => t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ group_id: col.id, position: (i * 5) % 12 })),
    );
    expect(results.map((r) => r.status)).toEqual(cards.map(() => 200));
    expect(sorted(await c.column(ann, project.id, col.id))).toEqual(sorted(cards));
  });

  it('leaves a card in exactly one group of a one-group type when it is moved to several at once', async () => {
    const cols = [];
    for (let i = 0; i < 6; i++) cols.push(await c.group(ann, root, status.id, `Race ${i}`));
    const card = await c.card(ann, root, 'raced', { group_id: cols[0].id });
    const results = await Promise.all([
      ...cols.map((g) => t.http.post(`${API}/cards/${card.id}/relocate`).set(as(ann)).send({ group_id: g.id, position: 0 })),
      ...cols.map((g) => t.http.post(`${API}/cards/${card.id}/add-to-group`).set(as(ann)).send({ group_id: g.id })),
    ]);
    for (const r of results) expect([200, 409]).toContain(r.status);
    const mine = (await c.get(ann, card.id)).groups.filter((g) => g.type_id === status.id);
    expect(mine).toHaveLength(1);
    for (const g of cols) {
      const column = await c.column(ann, project.id, g.id);
      expect(column).toEqual(g.id === mine[0].id ? [card.id] : []);
    }
  });

  it('keeps columns dense while cards are added, removed, moved and deleted at once', async () => {
    const a = await c.group(ann, root, labels.id, 'mixed a');
    const b = await c.group(ann, root, labels.id, 'mixed b');
    const parent = await c.card(ann, root, 'mixed parent');
    const cards: number[] = [];
    for (let i = 0; i < 16; i++) {
      const card = await c.card(ann, parent.id, `mixed ${i}`, { group_id: a.id });
      if (i % 2) await c.addToGroup(ann, card.id, { group_id: b.id });
      cards.push(card.id);
    }
    const deleted = cards.filter((_, i) => i % 5 === 0);
    const requests = cards.map((id, i) => {
      if (i % 5 === 0) return t.http.delete(`${API}/cards/${id}`).set(as(ann));
      if (i % 5 === 1) return t.http.post(`${API}/cards/${id}/remove-from-group`).set(as(ann)).send({ group_id: a.id });
      if (i % 5 === 2) return t.http.post(`${API}/cards/${id}/add-to-group`).set(as(ann)).send({ group_id: b.id, position: 0 });
      if (i % 5 === 3) return t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ group_id: a.id, position: 1 });
      return t.http.post(`${API}/cards/${id}/remove-from-group-type`).set(as(ann)).send({ type_id: labels.id });
    });
    const results = await Promise.all(requests);
    for (const r of results) expect(r.status).toBe(200);

    // Expected: 0 deleted; 1 out of `a`; 2 also in `b`; 3 only in `a` (relocate leaves the other labels); 4 in neither.
    const kind = (id: number) => cards.indexOf(id) % 5;
    const odd = (id: number) => cards.indexOf(id) % 2 === 1;
    const alive = cards.filter((id) => !deleted.includes(id));
    const inA = alive.filter((id) => kind(id) === 2 || kind(id) === 3);
    const inB = alive.filter((id) => kind(id) === 2 || (kind(id) === 1 && odd(id)));
    expect(sorted(await c.column(ann, project.id, a.id))).toEqual(sorted(inA));
    expect(sorted(await c.column(ann, project.id, b.id))).toEqual(sorted(inB));
  });

  it('creates cards into a column while its members move, leave and are deleted', async () => {
    const col = await c.group(ann, root, status.id, 'Inbox');
    const next = await c.group(ann, root, status.id, 'Triage');
    const parent = await c.card(ann, root, 'inbox parent');
    const members: number[] = [];
    for (let i = 0; i < 9; i++) members.push((await c.card(ann, parent.id, `member ${i}`, { group_id: col.id })).id);
    const results = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        t.http.post(`${API}/cards/${i % 2 ? parent.id : root}/children`).set(as(ann)).send({ title: `new ${i}`, group_id: col.id }),
      ),
      ...members.slice(0, 3).map((id) => t.http.delete(`${API}/cards/${id}`).set(as(ann))),
      ...members.slice(3, 6).map((id) => t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ group_id: next.id, position: 0 })),
      ...members.slice(6).map((id) => t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ parent_id: root, position: 0 })),
    ]);
    for (const r of results) expect([200, 201]).toContain(r.status);
    const created = results.slice(0, 8).map((r) => r.body.id as number);
    expect(sorted(await c.column(ann, project.id, col.id))).toEqual(sorted([...created, ...members.slice(6)]));
    expect(sorted(await c.column(ann, project.id, next.id))).toEqual(sorted(members.slice(3, 6)));
  });
  it('deletes a group while cards move into it: every request answers cleanly and nothing is left behind', async () => {
    const doomed = await c.group(ann, root, status.id, 'Doomed');
    const cards: number[] = [];
    for (let i = 0; i < 10; i++) cards.push((await c.card(ann, root, `toward doom ${i}`)).id);
    const results = await Promise.all([
      ...cards.slice(0, 5).map((id) => t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ group_id: doomed.id })),
      t.http.delete(`${API}/groups/${doomed.id}`).set(as(ann)),
      ...cards.slice(5).map((id) => t.http.post(`${API}/cards/${id}/add-to-group`).set(as(ann)).send({ group_id: doomed.id })),
    ]);
    for (const r of results) expect([200, 400]).toContain(r.status);
    expect(results[5].status).toBe(200);
    expect(results[5].body).toEqual({ id: doomed.id, deleted: true });
    for (const id of cards) expect((await c.get(ann, id)).groups).toEqual([]);
  });

  it('gives groups created at once in one scope distinct, dense positions; one title wins', async () => {
    const scope = await c.card(ann, root, 'columns');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.http.post(`${API}/cards/${scope.id}/groups`).set(as(ann)).send({ type_id: status.id, title: `Col ${i}`, position: 0 }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    const same = await Promise.all(
      Array.from({ length: 6 }, () => t.http.post(`${API}/cards/${scope.id}/groups`).set(as(ann)).send({ type_id: status.id, title: 'Same' })),
    );
    expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const own = (await c.groups(ann, scope.id, status.id)).filter((g) => g.card_id === scope.id);
    expect(own.map((g) => g.position)).toEqual(own.map((_, i) => i));
    expect(own).toHaveLength(11);
  });

  it('moves cards out of a column’s scope while others join, move within, are created into and deleted from it', async () => {
    const boardA = await c.card(ann, root, 'scope A');
    const boardB = await c.card(ann, root, 'scope B');
    const col = await c.group(ann, boardA.id, status.id, 'Scoped');
    const tag = await c.group(ann, boardA.id, labels.id, 'scoped tag');
    // Each card under its own parent, so the requests do not all queue on one parent's lock.
    const holders: number[] = [];
    const cards: number[] = [];
    for (let i = 0; i < 15; i++) {
      const holder = (await c.card(ann, boardA.id, `holder ${i}`)).id;
      holders.push(holder);
      const card = (await c.card(ann, holder, `scoped ${i}`, { group_id: col.id })).id;
      await c.addToGroup(ann, card, { group_id: tag.id, position: 0 });
      cards.push(card);
    }
    // Cards that join meanwhile, each under a parent of its own (siblings of a moving
    // card are another story: see scope-on-move.e2e-spec.ts).
    const loose: number[] = [];
    for (let i = 0; i < 5; i++) loose.push((await c.card(ann, (await c.card(ann, boardA.id, `loose holder ${i}`)).id, `loose ${i}`)).id);
    const results = await Promise.all([
      ...cards.map((id, i) => {
        if (i % 3 === 0) return t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ parent_id: boardB.id });
        if (i % 3 === 1) return t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ group_id: col.id, position: 0 });
        return i % 2 ? t.http.delete(`${API}/cards/${id}`).set(as(ann)) : t.http.post(`${API}/cards/${id}/remove-from-group`).set(as(ann)).send({ group_id: tag.id });
      }),
      ...loose.map((id) => t.http.post(`${API}/cards/${id}/add-to-group`).set(as(ann)).send({ group_id: col.id, position: 1 })),
      ...holders.slice(5, 10).map((h, i) => t.http.post(`${API}/cards/${h}/children`).set(as(ann)).send({ title: `late ${i}`, group_id: col.id })),
    ]);
    for (const r of results) expect([200, 201]).toContain(r.status);
    const created = results.slice(cards.length + loose.length).map((r) => r.body.id as number);

    const moved = cards.filter((_, i) => i % 3 === 0);
    const deleted = cards.filter((_, i) => i % 3 === 2 && i % 2 === 1);
    const stayed = cards.filter((id) => !moved.includes(id) && !deleted.includes(id));
    expect(sorted(await c.column(ann, project.id, col.id))).toEqual(sorted([...stayed, ...loose, ...created]));
    const tagged = cards.filter((_, i) => i % 3 === 1);
    expect(sorted(await c.column(ann, project.id, tag.id))).toEqual(sorted(tagged));
    for (const id of moved) {
      const card = await c.get(ann, id);
      expect(card.parent_id).toBe(boardB.id);
      expect(card.groups).toEqual([]);
      const reasons = (await c.groupEntries(ann, id)).filter((e) => e.data.reason === 'moved_out_of_scope');
      expect(reasons.map((e) => e.data.group_id).sort()).toEqual([col.id, tag.id].sort());
    }
  });

  it('moves cards to another board into its column while cards in the same groups are deleted', async () => {
    const boardA = await c.card(ann, root, 'race A');
    const boardB = await c.card(ann, root, 'race B');
    // The label first: its id is below the columns', so a deletion locks it before them.
    const tag = await c.group(ann, boardA.id, labels.id, 'race tag');
    const colA = await c.group(ann, boardA.id, status.id, 'race A column');
    const colB = await c.group(ann, boardB.id, status.id, 'race B column');
    const movers: number[] = [];
    const victims: number[] = [];
    for (let i = 0; i < 8; i++) {
      for (const list of [movers, victims]) {
        const holder = (await c.card(ann, boardA.id, `race holder ${i}`)).id;
        const card = (await c.card(ann, holder, `race card ${i}`, { group_id: colA.id })).id;
        await c.addToGroup(ann, card, { group_id: tag.id });
        list.push(card);
      }
    }
    const results = await Promise.all(
      movers.flatMap((id, i) => [
        t.http.post(`${API}/cards/${id}/relocate`).set(as(ann)).send({ parent_id: boardB.id, group_id: colB.id, position: 0 }),
        t.http.delete(`${API}/cards/${victims[i]}`).set(as(ann)),
      ]),
    );
    for (const r of results) expect(r.status).toBe(200);
    expect(await c.column(ann, project.id, colA.id)).toEqual([]);
    expect(await c.column(ann, project.id, tag.id)).toEqual([]);
    expect(sorted(await c.column(ann, project.id, colB.id))).toEqual(sorted(movers));
  });

  // Every lock is taken in one order (cards and the project counters, then the type,
  // then groups ascending, then writes; a card deletion locks its subtree's groups
  // before the cascade), so nothing above should have needed a deadlock and a retry.
  // PostgreSQL counts them.
  itOnPostgres('needed no deadlock along the way', async () => {
    const [row] = await t.app.get(DataSource).query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`);
    expect(Number(row.deadlocks)).toBe(0);
  });
});

