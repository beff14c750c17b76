import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource, EntityManager } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { FieldsApi } from '../../../src/modules/fields/index.js';
import { requestStatements } from '../../support/request-statements.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, expectRefusal, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

/**
 * Values of every field type through the attribute operations: the accepted
 * forms of the spec's table and DESIGN.md §5, normalised on output, and
 * refusals that leave the card exactly as it was.
 */
describe('field values', () => {
  let t: TestApp, c: FieldsClient, w: World;
  let ann: TestUser, bob: TestUser, vic: TestUser, eve: TestUser;
  let evilCard: number;
  let cardA: number;
  let cardB: number;

  beforeAll(async () => {
    ({ t, c, ann, w, users: { bob, vic, eve } } = await fieldsWorld({ users: { bob: 'member', vic: 'viewer', eve: 'outsider' } }));
    for (const [name, type, options] of [
      ['Title text', 'text'],
      ['Notes', 'content'],
      ['Estimate', 'number'],
      ['Done', 'bool'],
      ['Due', 'date'],
      ['Meeting', 'date', { time: true }],
      ['Sprint', 'date', { period: true }],
      ['Slot', 'date', { period: true, time: true }],
      ['Start time', 'time'],
      ['Owners', 'members'],
      ['Votes', 'likes'],
      ['Related', 'relationships'],
    ] as Array<[string, string, Record<string, boolean>?]>) {
      await c.field(ann, w.project, name, type, options);
    }
    cardA = (await c.card(ann, w.root, 'A')).id;
    cardB = (await c.card(ann, w.root, 'B')).id;
    const evil = await c.world(eve, 'Evil');
    evilCard = (await c.card(eve, evil.root, 'evil')).id;
  });
  afterAll(() => t.close());

  /** The card's state and stream length: what a refused request must leave untouched. */
  const snapshot = async (card: number) => {
    const json = await c.get(ann, card);
    return { attributes: json.attributes, updated_at: json.updated_at, stream: (await c.stream(ann, card)).length };
  };

  it('shows every field the card may use: null for single values, [] for lists, likes as {score, votes}', async () => {
    const card = await c.card(ann, w.root, 'empty');
    expect(card.attributes).toEqual({
      'Title text': null,
      Notes: null,
      Estimate: null,
      Done: null,
      Due: null,
      Meeting: null,
      Sprint: null,
      Slot: null,
      'Start time': null,
      Owners: [],
      Votes: { score: 0, votes: {} },
      Related: [],
    });
  });

  const accepted: Array<[string, unknown, unknown]> = [
    ['Title text', 'hello', 'hello'],
    ['Title text', '', ''],
    ['Title text', 'ünïcødé ✓ 🎉', 'ünïcødé ✓ 🎉'],
    ['Notes', '# Heading\n\n* item', '# Heading\n\n* item'],
    ['Estimate', 3, 3],
    ['Estimate', 2.5, 2.5],
    ['Estimate', -7, -7],
    ['Estimate', '42', 42],
    ['Estimate', ' -1.5e2 ', -150],
    ['Done', true, true],
    ['Done', false, false],
    ['Done', 'false', false],
    ['Done', 'no', false],
    ['Done', '0', false],
    ['Done', '', false],
    ['Done', ' FALSE ', false],
    ['Done', 0, false],
    ['Done', 1, true],
    ['Done', 'yes', true],
    ['Done', 'anything', true],
    ['Due', '2024-02-29', '2024-02-29'],
    ['Due', ' 2024-12-31 ', '2024-12-31'],
    ['Meeting', '2024-01-02', '2024-01-02'],
    ['Meeting', '2024-01-02 10:11:12', '2024-01-02T10:11:12'],
    ['Meeting', '2024-01-02T23:59:59', '2024-01-02T23:59:59'],
    ['Sprint', { start: '2024-01-01', end: '2024-01-14' }, { start: '2024-01-01', end: '2024-01-14' }],
    ['Sprint', '2024-01-01 -> 2024-01-14', { start: '2024-01-01', end: '2024-01-14' }],
    ['Sprint', '2024-03-01->2024-03-01', { start: '2024-03-01', end: '2024-03-01' }],
    ['Slot', '2024-01-01 09:00:00 -> 2024-01-01 17:30:00', { start: '2024-01-01T09:00:00', end: '2024-01-01T17:30:00' }],
    ['Start time', '09:30:00', '09:30:00'],
    ['Start time', '23:59:59', '23:59:59'],
  ];

  it.each(accepted)('%s accepts %j and shows %j', async (field, input, shown) => {
    const res = await c.set(ann, cardA, field, input).expect(200);
    expect(res.body.id).toBe(cardA);
    expect(res.body.attributes[field]).toEqual(shown);
    // The answer is the card as a read after the write shows it, byte for byte
    // (an object value's keys in the order the database stores them, too).
    const read = await t.http.get(`${API}/cards/${cardA}`).set(as(ann)).expect(200);
    expect(read.body.attributes[field]).toEqual(shown);
    expect(res.text).toBe(read.text);
  });

  it('null clears a single value and a list', async () => {
    await c.set(ann, cardA, 'Estimate', 5).expect(200);
    await c.set(ann, cardA, 'Owners', [ann.id]).expect(200);
    await c.set(ann, cardA, 'Estimate', null).expect(200);
    const res = await c.set(ann, cardA, 'Owners', null).expect(200);
    expect(res.body.attributes.Estimate).toBeNull();
    expect(res.body.attributes.Owners).toEqual([]);
  });

  const refused: Array<[string, unknown]> = [
    ['Title text', 5],
    ['Title text', true],
    ['Title text', { text: 'x' }],
    ['Title text', 'nul\u0000byte'],
    ['Notes', 12],
    ['Notes', ['a']],
    ['Estimate', 'abc'],
    ['Estimate', true],
    ['Estimate', '0x10'],
    ['Estimate', ''],
    ['Estimate', [1]],
    ['Done', 2],
    ['Done', [true]],
    ['Done', { value: true }],
    ['Done', 'a\u0000b'],
    ['Done', '\ud800'],
    ['Due', '2023-02-29'],
    ['Due', '2024-13-01'],
    ['Due', '2024-01-01 10:00:00'],
    ['Due', 20240101],
    ['Due', '01/02/2024'],
    ['Meeting', '2024-01-02 25:00:00'],
    ['Meeting', '2024-01-02T10:11'],
    ['Sprint', { start: '2024-02-01', end: '2024-01-01' }],
    ['Sprint', { start: '2024-01-01' }],
    ['Sprint', '2024-01-01'],
    ['Sprint', '2024-01-01 -> soon'],
    ['Start time', '24:00:00'],
    ['Start time', '9:30'],
    ['Start time', 930],
    ['Owners', 'bob'],
    ['Owners', '@nobody_here'],
    ['Owners', { id: 1 }],
    ['Votes', 2],
    ['Votes', 'up'],
    ['Votes', true],
    ['Related', 'abc'],
    ['Related', 0],
    ['Related', 99999999],
  ];

  it.each(refused)('%s refuses %j with a 400 naming the field, leaving the card unchanged', async (field, input) => {
    await c.set(ann, cardA, 'Estimate', 8).expect(200);
    const before = await snapshot(cardA);
    const res = await c.set(ann, cardA, field, input);
    expectRefusal(res, field);
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    expect(await snapshot(cardA)).toEqual(before);
  });

  describe('members', () => {
    it('takes user ids and @usernames of the team, as a single value or a list, shown as ids', async () => {
      let res = await c.set(ann, cardA, 'Owners', bob.id).expect(200);
      expect(res.body.attributes.Owners).toEqual([bob.id]);
      res = await c.set(ann, cardA, 'Owners', `@${ann.username}`).expect(200);
      expect(res.body.attributes.Owners).toEqual([ann.id]);
      res = await c.set(ann, cardA, 'Owners', [`@${bob.username.toUpperCase()}`, ann.id, String(vic.id)]).expect(200);
      expect(res.body.attributes.Owners).toEqual([bob.id, ann.id, vic.id]);
    });

    it('refuses users outside the team, by id and by name', async () => {
      await c.set(ann, cardA, 'Owners', [ann.id]).expect(200);
      const before = await snapshot(cardA);
      for (const value of [eve.id, `@${eve.username}`, [ann.id, eve.id]]) {
        const res = await c.set(ann, cardA, 'Owners', value);
        expectRefusal(res, 'Owners');
        expect(res.body.detail).toMatch(/not a member/);
      }
      expect(await snapshot(cardA)).toEqual(before);
    });

    it('answers a username no one has as one of another team: which usernames exist is not told', async () => {
      const refused = async (value: unknown) => (await c.set(ann, cardA, 'Owners', value)).body.errors;
      expect(await refused(`@${eve.username}`)).toEqual([{ field: 'Owners', message: `user @${eve.username} is not a member of this project's team` }]);
      expect(await refused('@nobody_at_all')).toEqual([{ field: 'Owners', message: "user @nobody_at_all is not a member of this project's team" }]);
      expect(await refused(999_999)).toEqual([{ field: 'Owners', message: "user 999999 is not a member of this project's team" }]);
    });
  });

  describe('relationships', () => {
    it('points at cards of the same team, in other projects too', async () => {
      const other = await c.project(ann, w.org, 'Other project');
      const far = (await c.card(ann, other.root, 'far')).id;
      const res = await c.set(ann, cardA, 'Related', [cardB, String(far)]).expect(200);
      expect(res.body.attributes.Related).toEqual([cardB, far]);
      expect((await c.set(ann, cardA, 'Related', cardB).expect(200)).body.attributes.Related).toEqual([cardB]);
    });

    it('refuses the card itself and cards of another team', async () => {
      await c.set(ann, cardA, 'Related', [cardB]).expect(200);
      const before = await snapshot(cardA);
      let res = await c.set(ann, cardA, 'Related', cardA);
      expectRefusal(res, 'Related');
      expect(res.body.detail).toMatch(/itself/);
      res = await c.set(ann, cardA, 'Related', [cardB, evilCard]);
      expectRefusal(res, 'Related');
      expect(res.body.detail).not.toContain('evil');
      res = await c.append(ann, cardA, 'Related', evilCard);
      expectRefusal(res, 'Related');
      expect(await snapshot(cardA)).toEqual(before);
    });

    it('loses a target when the target card is deleted', async () => {
      const doomed = (await c.card(ann, w.root, 'doomed')).id;
      await c.set(ann, cardA, 'Related', [cardB, doomed]).expect(200);
      await t.http.delete(`${API}/cards/${doomed}`).set(as(ann)).expect(200);
      expect((await c.get(ann, cardA)).attributes.Related).toEqual([cardB]);
    });
  });

  describe('likes', () => {
    it("sets the caller's vote; the value is {score, votes}", async () => {
      const card = (await c.card(ann, w.root, 'liked')).id;
      let res = await c.set(ann, card, 'Votes', 1).expect(200);
      expect(res.body.attributes.Votes).toEqual({ score: 1, votes: { [ann.id]: 1 } });
      res = await c.set(bob, card, 'Votes', '-1').expect(200);
      expect(res.body.attributes.Votes).toEqual({ score: 0, votes: { [ann.id]: 1, [bob.id]: -1 } });
      res = await c.setMany(bob, card, { Votes: 1 }).expect(200);
      expect(res.body.attributes.Votes).toEqual({ score: 2, votes: { [ann.id]: 1, [bob.id]: 1 } });
      res = await c.set(ann, card, 'Votes', 0).expect(200);
      expect(res.body.attributes.Votes).toEqual({ score: 1, votes: { [bob.id]: 1 } });
      res = await c.set(bob, card, 'Votes', null).expect(200);
      expect(res.body.attributes.Votes).toEqual({ score: 0, votes: {} });
    });
  });

  describe('group_type fields', () => {
    let labels: string;
    beforeAll(async () => {
      labels = 'Labels';
      await t.app.get(FieldsApi).createGroupTypeField({ projectId: w.project, groupTypeId: 4242, name: labels });
    });

    it('are refused by every attribute operation with a pointer to the grouping operations', async () => {
      const before = await snapshot(cardA);
      const attempts = [
        c.set(ann, cardA, labels, [1]),
        c.set(ann, cardA, labels, null),
        c.setMany(ann, cardA, { attributes: { [labels]: [1] } }),
        c.setMany(ann, cardA, { [labels]: 1, Estimate: 1 }),
        c.append(ann, cardA, labels, 1),
        c.pop(ann, cardA, labels, { value: 1 }),
        c.pop(ann, cardA, labels),
      ];
      for (const attempt of attempts) {
        const res = await attempt;
        expect(res.status).toBe(400);
        expect(res.body.detail).toMatch(/grouping operations/);
      }
      expect(await snapshot(cardA)).toEqual(before);
      const refusedCreate = await t.http
        .post(`${API}/cards/${w.root}/children`)
        .set(as(ann))
        .send({ title: 'x', attributes: { [labels]: [1] } });
      expect(refusedCreate.status).toBe(400);
      expect(refusedCreate.body.detail).toMatch(/grouping operations/);
    });

    it('show as a list of groups ([] without a grouping provider)', async () => {
      expect((await c.get(ann, cardA)).attributes[labels]).toEqual([]);
    });
  });

  describe('POST /cards/{id}/attributes', () => {
    it('sets several fields from the attributes object, by name or id', async () => {
      const estimate = (await t.http.get(`${API}/projects/${w.project}/attributes`).set(as(ann)).expect(200)).body.find(
        (a: { name: string }) => a.name === 'Estimate',
      );
      const res = await c
        .setMany(ann, cardB, { attributes: { [estimate.id]: '13', 'Title text': 'batch', Done: 'no' } })
        .expect(200);
      expect(res.body.attributes).toMatchObject({ Estimate: 13, 'Title text': 'batch', Done: false });
    });

    it('sets several fields from a flat object, and from form fields', async () => {
      let res = await c.setMany(ann, cardB, { Estimate: 21, Due: '2025-05-05' }).expect(200);
      expect(res.body.attributes).toMatchObject({ Estimate: 21, Due: '2025-05-05' });
      res = await t.http
        .post(`${API}/cards/${cardB}/attributes`)
        .set(as(ann))
        .type('form')
        .send({ Estimate: '34', Done: 'false' })
        .expect(200);
      expect(res.body.attributes).toMatchObject({ Estimate: 34, Done: false });
    });

    it('finds names in any case', async () => {
      const res = await c.setMany(ann, cardB, { estimate: 55 }).expect(200);
      expect(res.body.attributes.Estimate).toBe(55);
    });

    it('sets none when one value is bad', async () => {
      await c.setMany(ann, cardB, { Estimate: 1, 'Title text': 'keep', Owners: [ann.id] }).expect(200);
      const before = await snapshot(cardB);
      for (const body of [
        { attributes: { Estimate: 2, 'Title text': 'changed', Owners: [bob.id], Due: 'tomorrow' } },
        { Estimate: 2, 'Title text': 'changed', Owners: [eve.id] },
        { Estimate: 2, 'No such field': 1 },
        { attributes: { Estimate: 2, Related: [cardB] } },
      ]) {
        const res = await c.setMany(ann, cardB, body);
        expect(res.status).toBe(400);
      }
      expect(await snapshot(cardB)).toEqual(before);
    });

    it('lists every bad value of the batch, in the order given, each under its key as written; writes none', async () => {
      await c.setMany(ann, cardB, { Estimate: 1, Due: '2025-01-01' }).expect(200);
      const before = await snapshot(cardB);
      let res = await c.setMany(ann, cardB, { Estimate: 'x', 'Title text': 'fine', Due: 'bad' });
      expectRefusal(res, 'Estimate');
      expect(res.body.errors).toEqual([
        { field: 'Estimate', message: 'expected a number' },
        { field: 'Due', message: expect.stringMatching(/^expected a date/) },
      ]);
      expect(res.body.detail).toMatch(/^2 values refused: Estimate: expected a number; Due: expected a date/);
      res = await c.setMany(ann, cardB, { attributes: { due: 'bad', Nope: 1, estimate: 'x', Done: 7 } });
      // Nested under "attributes", every refused value is named by its path, as the unknown key is.
      expect([res.status, res.body.type, res.body.errors.map((e: { field: string }) => e.field)]).toEqual([
        400,
        'INPUT.INVALID',
        ['attributes.due', 'attributes.Nope', 'attributes.estimate', 'attributes.Done'],
      ]);
      // One bad value alone keeps its own error, named as written.
      res = await c.setMany(ann, cardB, { 'Title text': 'fine', ESTIMATE: 'x' });
      expect([res.status, res.body.detail, res.body.errors]).toEqual([400, 'ESTIMATE: expected a number', [{ field: 'ESTIMATE', message: 'expected a number' }]]);
      expect(await snapshot(cardB)).toEqual(before);
    });

    it('names the unknown field, refuses empty and mixed bodies', async () => {
      let res = await c.setMany(ann, cardB, { attributes: { Nope: 1 } });
      expectRefusal(res, 'Nope');
      expect(res.body.errors[0].field).toBe('attributes.Nope');
      res = await c.setMany(ann, cardB, { Nope: 1 });
      expect(res.body.errors[0].field).toBe('Nope');
      expect((await c.setMany(ann, cardB, {})).status).toBe(400);
      expect((await c.setMany(ann, cardB, { attributes: {} })).status).toBe(400);
      expect((await c.setMany(ann, cardB, { attributes: { Estimate: 1 }, Estimate: 2 })).status).toBe(400);
      expect((await c.setMany(ann, cardB, { attributes: { Estimate: 1, estimate: 2 } })).status).toBe(400);
      expect((await c.setMany(ann, cardB, [1, 2])).status).toBe(400);
    });
  });

  describe('POST /cards/{id}/attributes/{name_or_id}', () => {
    it('takes the field id in the path', async () => {
      const list = (await t.http.get(`${API}/projects/${w.project}/attributes`).set(as(ann)).expect(200)).body;
      const due = list.find((a: { name: string }) => a.name === 'Due');
      expect((await c.set(ann, cardB, due.id, '2030-01-01').expect(200)).body.attributes.Due).toBe('2030-01-01');
    });

    it('takes an id before a name: a field named after another field’s id does not hide it', async () => {
      // Names of digits only are refused now; a field named so before that rule keeps working.
      const nw = await c.world(ann, 'Numeric names');
      const estimate = await c.field(ann, nw.project, 'Estimate', 'number');
      const owners = await c.field(ann, nw.project, 'Owners', 'members');
      const named = async (name: string) => {
        const field = await c.field(ann, nw.project, `Old ${name}`, 'text');
        await t.app.get(DataSource).query(`UPDATE fields.attributes SET name = $1 WHERE id = $2`, [name, field.id]);
      };
      await named(String(estimate.id));
      await named(String(owners.id));
      await named('999999999');
      const card = (await c.card(ann, nw.root, 'numbers')).id;
      const set = (await c.set(ann, card, estimate.id, 7).expect(200)).body.attributes;
      expect(set).toMatchObject({ Estimate: 7, [String(estimate.id)]: null });
      expect((await c.setMany(ann, card, { attributes: { [String(estimate.id)]: 8 } })).body.attributes).toMatchObject({ Estimate: 8 });
      const members = (await t.http.get(`${API}/cards/${card}/attributes/${owners.id}/choices`).set(as(ann)).expect(200)).body as unknown[];
      expect(members.length).toBeGreaterThan(0);
      // A name of digits that is no field's id is still a name.
      expect((await c.set(ann, card, '999999999', 'year').expect(200)).body.attributes['999999999']).toBe('year');
    });

    it('answers 404 for an unknown field, 400 without a value or with unknown keys', async () => {
      await c.set(ann, cardB, 'Nope', 1).expect(404);
      await c.set(ann, cardB, 999999, 1).expect(404);
      expectRefusal(await t.http.post(`${API}/cards/${cardB}/attributes/Estimate`).set(as(ann)).send({}), 'value');
      expectRefusal(await t.http.post(`${API}/cards/${cardB}/attributes/Estimate`).set(as(ann)).send({ value: 1, extra: 2 }), 'extra');
    });
  });

  describe('append and pop', () => {
    it('append adds one value; pop {"value": v} removes v; pop without a body removes the last', async () => {
      const card = (await c.card(ann, w.root, 'lists')).id;
      let res = await c.append(ann, card, 'Owners', ann.id).expect(200);
      expect(res.body.attributes.Owners).toEqual([ann.id]);
      res = await c.append(ann, card, 'Owners', `@${bob.username}`).expect(200);
      res = await c.append(ann, card, 'Owners', vic.id).expect(200);
      expect(res.body.attributes.Owners).toEqual([ann.id, bob.id, vic.id]);
      res = await c.append(ann, card, 'Owners', bob.id).expect(200);
      expect(res.body.attributes.Owners).toEqual([ann.id, bob.id, vic.id]);
      res = await c.pop(ann, card, 'Owners', { value: `@${bob.username}` }).expect(200);
      expect(res.body.attributes.Owners).toEqual([ann.id, vic.id]);
      res = await c.pop(ann, card, 'Owners').expect(200);
      expect(res.body.attributes.Owners).toEqual([ann.id]);
      res = await c.pop(ann, card, 'Owners', {}).expect(200);
      expect(res.body.attributes.Owners).toEqual([]);

      res = await c.append(ann, card, 'Related', cardA).expect(200);
      res = await c.append(ann, card, 'Related', String(cardB)).expect(200);
      expect(res.body.attributes.Related).toEqual([cardA, cardB]);
      res = await c.pop(ann, card, 'Related', { value: cardA }).expect(200);
      expect(res.body.attributes.Related).toEqual([cardB]);
      res = await c.pop(ann, card, 'Related').expect(200);
      expect(res.body.attributes.Related).toEqual([]);
    });

    it('refuses append and pop on single-valued fields, arrays in append, and values not in the list', async () => {
      const card = (await c.card(ann, w.root, 'refusals', { Owners: [ann.id], Estimate: 1 })).id;
      const before = await snapshot(card);
      expectRefusal(await c.append(ann, card, 'Estimate', 2), 'Estimate');
      expectRefusal(await c.pop(ann, card, 'Estimate'), 'Estimate');
      expectRefusal(await c.pop(ann, card, 'Votes', { value: 1 }), 'Votes');
      expectRefusal(await c.append(ann, card, 'Owners', [bob.id, vic.id]), 'Owners');
      expectRefusal(await c.append(ann, card, 'Owners', eve.id), 'Owners');
      expectRefusal(await c.pop(ann, card, 'Owners', { value: bob.id }), 'Owners');
      expectRefusal(await c.pop(ann, card, 'Related'), 'Related');
      expectRefusal(await c.pop(ann, card, 'Owners', { value: 1, other: 2 }), 'other');
      expect(await snapshot(card)).toEqual(before);
    });
  });

  describe('choices', () => {
    const choices = (card: number, field: string | number, user: TestUser = ann) =>
      t.http.get(`${API}/cards/${card}/attributes/${encodeURIComponent(String(field))}/choices`).set(as(user));

    it('lists (value, label) pairs for members, relationships, bool and likes', async () => {
      const members = (await choices(cardA, 'Owners').expect(200)).body as Array<[number, string]>;
      expect(members.map(([id]) => id).sort()).toEqual([ann.id, bob.id, vic.id].sort());
      expect(members.find(([id]) => id === bob.id)![1]).toContain(bob.username);
      const related = (await choices(cardA, 'Related').expect(200)).body as Array<[number, string]>;
      expect(related).toContainEqual([cardB, 'B']);
      expect(related.map(([id]) => id)).not.toContain(cardA);
      expect(related.map(([id]) => id)).not.toContain(evilCard);
      expect((await choices(cardA, 'Done').expect(200)).body).toEqual([
        [true, 'Yes'],
        [false, 'No'],
      ]);
      expect((await choices(cardA, 'Votes').expect(200)).body.map((p: unknown[]) => p[0])).toEqual([1, 0, -1]);
    });

    it('is [] for other types; readable by viewers; 404 for unknown fields and cross-team cards', async () => {
      expect((await choices(cardA, 'Estimate').expect(200)).body).toEqual([]);
      expect((await choices(cardA, 'Due').expect(200)).body).toEqual([]);
      await choices(cardA, 'Owners', vic).expect(200);
      await choices(cardA, 'Nope').expect(404);
      await choices(evilCard, 'Owners').expect(404);
      await choices(cardA, 'Owners', eve).expect(404);
    });

    it('offers the team’s visible cards as relationships, by project then ref, without top-level cards', async () => {
      const team = await c.world(bob, 'Choices');
      await c.field(bob, team.project, 'Links', 'relationships');
      const second = await c.project(bob, team.org, 'Choices second');
      const other = (await c.card(bob, second.root, 'other project')).id; // created first, listed after
      const self = (await c.card(bob, team.root, 'self')).id;
      const x = (await c.card(bob, team.root, 'x')).id;
      const shelved = (await c.card(bob, team.root, 'shelved')).id;
      const under = (await c.card(bob, shelved, 'under shelved')).id;
      const y = (await c.card(bob, x, 'y')).id;
      await t.http.post(`${API}/cards/${shelved}/archive`).set(as(bob)).expect(200);
      const list = (await choices(self, 'Links', bob).expect(200)).body as Array<[number, string]>;
      expect(list).toEqual([
        [x, 'x'],
        [y, 'y'],
        [other, 'other project'],
      ]);
      expect(list.map(([id]) => id)).not.toContain(under);
    });

    it('refuses as a relationship what choices leaves out as no card to relate to (a top-level card), and takes an archived card', async () => {
      const card = (await c.card(ann, w.root, 'related to the project?')).id;
      const second = await c.project(ann, w.org, 'Related second');
      const before = await snapshot(card);
      for (const root of [w.root, second.root]) {
        for (const send of [() => c.set(ann, card, 'Related', root), () => c.set(ann, card, 'Related', [cardA, root]), () => c.append(ann, card, 'Related', root)]) {
          const res = await send();
          expectRefusal(res, 'Related');
          expect(res.body.errors).toEqual([{ field: 'Related', message: `card ${root} is a project's top-level card, which a card cannot be related to` }]);
        }
        const created = await t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'bad', attributes: { Related: [root] } });
        expectRefusal(created, 'Related');
      }
      expect(await snapshot(card)).toEqual(before);
      // An archived card stays a value: a client sends back the value it read, which may hold one archived since.
      const shelved = (await c.card(ann, w.root, 'shelved')).id;
      await c.set(ann, card, 'Related', [cardA, shelved]).expect(200);
      await t.http.post(`${API}/cards/${shelved}/archive`).set(as(ann)).expect(200);
      const related = (await c.get(ann, card)).attributes.Related;
      expect(related).toEqual([cardA, shelved]);
      await c.set(ann, card, 'Related', related).expect(200);
      await c.append(ann, card, 'Related', cardB).expect(200);
      expect((await c.get(ann, card)).attributes.Related).toEqual([cardA, shelved, cardB]);
    });

    it('each value can be sent back to set the field', async () => {
      for (const field of ['Owners', 'Related', 'Done', 'Votes']) {
        const [[value]] = (await choices(cardA, field).expect(200)).body as Array<[unknown, string]>;
        await c.set(ann, cardA, field, value).expect(200);
      }
    });
  });

  describe('card creation with attributes', () => {
    it('sets the values in the creation', async () => {
      const card = await c.card(ann, w.root, 'with values', { Estimate: '5', Owners: `@${bob.username}`, Votes: 1 });
      expect(card.attributes).toMatchObject({ Estimate: 5, Owners: [bob.id], Votes: { score: 1, votes: { [ann.id]: 1 } } });
    });

    it('creates nothing when a value is bad', async () => {
      const kids = async () => (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body.length;
      const before = await kids();
      for (const attributes of [{ Estimate: 'many' }, { Owners: [eve.id] }, { Nope: 1 }, { Related: [evilCard] }]) {
        const res = await t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'bad', attributes });
        expect(res.status).toBe(400);
      }
      expect(await kids()).toBe(before);
    });

    it("lists every bad value of a new card's attributes, as the attribute operation does", async () => {
      const res = await t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'bad', attributes: { Estimate: 'many', Nope: 1, Due: 'bad' } });
      expect([res.status, res.body.errors?.map((e: { field: string }) => e.field)]).toEqual([400, ['attributes.Estimate', 'attributes.Nope', 'attributes.Due']]);
      expect(res.body.detail).toMatch(/^3 values refused: attributes\.Estimate: expected a number; attributes\.Nope: /);
    });
  });

  describe('the card stream', () => {
    it('records every value change as card.attribute_changed, and nothing for a no-op', async () => {
      const card = (await c.card(ann, w.root, 'streamed')).id;
      await c.set(ann, card, 'Estimate', 1).expect(200);
      await c.setMany(ann, card, { Estimate: 2, Done: true }).expect(200);
      await c.append(ann, card, 'Owners', ann.id).expect(200);
      await c.pop(ann, card, 'Owners').expect(200);
      await c.set(ann, card, 'Estimate', 2).expect(200);
      const entries = (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed').reverse();
      expect(entries.map((e) => [e.kind, e.data.attribute, e.data.operation, e.data.from, e.data.to])).toEqual([
        ['activity', 'Estimate', 'set', null, 1],
        ['activity', 'Estimate', 'set', 1, 2],
        ['activity', 'Done', 'set', null, true],
        ['activity', 'Owners', 'append', [], [ann.id]],
        ['activity', 'Owners', 'pop', [ann.id], []],
      ]);
    });
  });

  describe('access', () => {
    it('viewers cannot write (403); outsiders get 404 for cards of another team', async () => {
      const before = await snapshot(cardA);
      expect((await c.set(vic, cardA, 'Estimate', 1)).status).toBe(403);
      expect((await c.setMany(vic, cardA, { Estimate: 1 })).status).toBe(403);
      expect((await c.set(eve, cardA, 'Estimate', 1)).status).toBe(404);
      expect((await c.append(eve, cardA, 'Owners', eve.id)).status).toBe(404);
      expect((await c.pop(eve, cardA, 'Owners')).status).toBe(404);
      expect((await c.setMany(eve, cardA, { Estimate: 1 })).status).toBe(404);
      expect((await c.set(ann, evilCard, 'Estimate', 1)).status).toBe(404);
      expect(await snapshot(cardA)).toEqual(before);
    });
  });

  it('reads the values of a batch of cards in one statement, whatever their fields’ types', async () => {
    const [one, two] = [(await c.card(ann, w.root, 'one')).id, (await c.card(ann, w.root, 'two')).id];
    await c.set(ann, one, 'Estimate', 5).expect(200);
    await c.set(ann, one, 'Owners', [bob.id, ann.id]).expect(200);
    await c.set(bob, one, 'Votes', 1).expect(200);
    await c.set(ann, two, 'Related', [one]).expect(200);
    await c.set(ann, two, 'Due', '2024-05-01').expect(200);
    const fields = t.app.get(FieldsApi);
    const queries = jest.spyOn(EntityManager.prototype, 'query');
    try {
      const { byCard } = await fields.attributesOf([one, two].map((id) => ({ id, projectId: w.project, modelId: null })));
      // The projects' field definitions, then every kind of value at once.
      expect(queries).toHaveBeenCalledTimes(2);
      expect(byCard.get(one)).toMatchObject({ Estimate: 5, Owners: [bob.id, ann.id], Votes: { score: 1, votes: { [bob.id]: 1 } }, Related: [] });
      expect(byCard.get(two)).toMatchObject({ Estimate: null, Owners: [], Votes: { score: 0, votes: {} }, Related: [one], Due: '2024-05-01' });
    } finally {
      queries.mockRestore();
    }
  });

  /** The first words of each statement sent while `send` runs. */
  const statementsOf = async (send: () => Promise<unknown>): Promise<string[]> => {
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      await send();
      return requestStatements(sent.mock.calls);
    } finally {
      sent.mockRestore();
    }
  };

  it('sets a scalar value in one guarded statement that records its entry and reads the answer: after one read the first time, alone after that', async () => {
    const card = (await c.card(ann, w.root, 'counted')).id;
    // the key; the card with the caller's access and its project's definitions;
    // then, with no transaction around it, the touch (only if the card's row is
    // current and the definitions unchanged), the upsert, its entry and the answer's reads
    expect(await statementsOf(() => c.set(ann, card, 'Estimate', 3).expect(200))).toEqual(['WITH k', 'SELECT id,', 'WITH seen']);
    let res: { text: string; body: { attributes: Record<string, unknown> } } | undefined;
    // planned from what the first set read: the key and the guarded statement
    expect(await statementsOf(async () => (res = await c.set(ann, card, 'Estimate', 8).expect(200)))).toEqual(['WITH k', 'WITH seen']);
    expect(res!.body.attributes.Estimate).toBe(8);
    expect(res!.text).toBe((await t.http.get(`${API}/cards/${card}`).set(as(ann)).expect(200)).text);
    // so is a set of several fields, and another user's
    expect(await statementsOf(() => c.setMany(bob, card, { Estimate: 9, 'Title text': 'many' }).expect(200))).toEqual(['WITH k', 'WITH seen']);
    const changes = (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed');
    expect(changes.map((e) => [e.kind, e.data.from, e.data.to, e.data.attribute, e.data.operation])).toEqual([
      ['activity', null, 'many', 'Title text', 'set'],
      ['activity', 8, 9, 'Estimate', 'set'],
      ['activity', 3, 8, 'Estimate', 'set'],
      ['activity', null, 3, 'Estimate', 'set'],
    ]);
    // the same value again changes nothing and records nothing
    await c.set(ann, card, 'Estimate', 9).expect(200);
    expect((await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed')).toHaveLength(4);
  });

  /**
   * Runs `interloper` on the connection of the guarded statement just before
   * that statement is sent (the only connection embedded PGlite has), as
   * another writer committing between the plan and the write would.
   */
  const beforeGuardedWrite = async (interloper: (send: (sql: string, params: unknown[]) => Promise<unknown>) => Promise<void>, request: () => Promise<unknown>) => {
    const send = PostgresQueryRunner.prototype.query;
    let interloped = false;
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query').mockImplementation(async function (this: PostgresQueryRunner, ...args: unknown[]) {
      if (!interloped && String(args[0]).trimStart().startsWith('WITH seen')) {
        interloped = true;
        await interloper((sql, params) => send.call(this, sql, params));
      }
      return (send as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    } as typeof send);
    try {
      await request();
      expect(interloped).toBe(true);
      return requestStatements(sent.mock.calls);
    } finally {
      sent.mockRestore();
    }
  };

  it('writes over a change another writer committed after the plan, recording the value that writer left', async () => {
    const card = (await c.card(ann, w.root, 'raced')).id;
    await c.set(ann, card, 'Estimate', 3).expect(200);
    let res: { text: string; body: unknown } | undefined;
    const statements = await beforeGuardedWrite(
      async (send) => {
        await send(`UPDATE cards.cards SET title = 'renamed meanwhile', updated_at = now() WHERE id = $1`, [card]);
        await send(
          `UPDATE fields.scalar_values SET value = '5' WHERE card_id = $1 AND attribute_id = (SELECT id FROM fields.attributes WHERE name = 'Estimate' AND project_id = $2)`,
          [card, w.project],
        );
      },
      async () => (res = await c.set(ann, card, 'Estimate', 8).expect(200)),
    );
    expect(statements).toEqual(['WITH k', 'WITH seen']);
    expect(res!.body).toMatchObject({ title: 'renamed meanwhile', attributes: { Estimate: 8 } });
    expect(res!.text).toBe((await t.http.get(`${API}/cards/${card}`).set(as(ann)).expect(200)).text);
    const changes = (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed');
    expect(changes.map((e) => [e.data.from, e.data.to])).toEqual([
      [5, 8],
      [null, 3],
    ]);
  });

  it('writes nothing from a plan whose field was renamed meanwhile: the card is read again, and the old name is unknown (404)', async () => {
    const project = await c.world(ann, 'Renames');
    const field = await c.field(ann, project.project, 'Size', 'number');
    const card = (await c.card(ann, project.root, 'renamed field')).id;
    await c.set(ann, card, 'Size', 1).expect(200);
    const before = await snapshot(card);
    let status = 0;
    const statements = await beforeGuardedWrite(
      async (send) => {
        await send(`UPDATE fields.attributes SET name = 'Effort' WHERE id = $1`, [field.id]);
      },
      async () => (status = (await c.set(ann, card, 'Size', 2)).status),
    );
    expect(status).toBe(404);
    // the remembered plan's guarded write, then the read that finds no field "Size"
    expect(statements).toEqual(['WITH k', 'WITH seen', 'SELECT id,']);
    expect({ ...(await snapshot(card)), attributes: undefined }).toEqual({ ...before, attributes: undefined });
    expect((await c.get(ann, card)).attributes).toEqual({ Effort: 1 });
  });

  it('writes nothing from a plan made for the card’s old model: the card is read again and planned for its new one', async () => {
    const project = await c.world(ann, 'Models');
    const bug = (await t.http.post(`${API}/projects/${project.project}/models`).set(as(ann)).send({ name: 'Bug' }).expect(201)).body;
    await t.http.post(`${API}/models/${bug.id}/attributes`).set(as(ann)).send({ name: 'Severity', type: 'number' }).expect(201);
    const card = (await c.card(ann, project.root, 'modelled')).id;
    await t.http.post(`${API}/cards/${card}/model`).set(as(ann)).send({ model_id: bug.id }).expect(200);
    await c.set(ann, card, 'Severity', 1).expect(200);
    let status = 0;
    const statements = await beforeGuardedWrite(
      async (send) => {
        await send(`UPDATE cards.cards SET model_id = NULL WHERE id = $1`, [card]);
      },
      async () => (status = (await c.set(ann, card, 'Severity', 2)).status),
    );
    // Without the model, the card may not use the field.
    expect(status).toBe(400);
    expect(statements).toEqual(['WITH k', 'WITH seen', 'SELECT id,']);
    expect((await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed')).toHaveLength(1);
  });

  it('checks the caller’s access before answering for a card planned before: outsiders 404, viewers 403, whatever the value', async () => {
    const card = (await c.card(ann, w.root, 'remembered')).id;
    await c.set(ann, card, 'Estimate', 1).expect(200);
    const before = await snapshot(card);
    // A bad value must not tell an outsider that the card has such a field.
    expect((await c.set(eve, card, 'Estimate', 'not a number')).status).toBe(404);
    expect((await c.set(eve, card, 'Estimate', 2)).status).toBe(404);
    expect((await c.setMany(eve, card, { Estimate: 2 })).status).toBe(404);
    expect((await c.set(vic, card, 'Estimate', 'not a number')).status).toBe(403);
    expect((await c.set(vic, card, 'Estimate', 2)).status).toBe(403);
    expect(await snapshot(card)).toEqual(before);
    // A member removed from the team since their last set can no longer write.
    const dan = await t.user();
    await c.addMember(ann, w.org, dan, 'member');
    await c.set(dan, card, 'Estimate', 3).expect(200);
    await t.http.delete(`${API}/organizations/${w.org}/members/${dan.id}`).set(as(ann)).expect(200);
    const after = await snapshot(card);
    expect((await c.set(dan, card, 'Estimate', 4)).status).toBe(404);
    expect(await snapshot(card)).toEqual(after);
  });
});
