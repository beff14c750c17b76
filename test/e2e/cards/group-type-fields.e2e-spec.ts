import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { FieldsApi } from '../../../src/modules/fields/index.js';
import { GroupingApi } from '../../../src/modules/grouping/index.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsClient, type World } from '../fields/fields-fixtures.js';

/**
 * A group_type field's value is the card's groups of its type: fields owns the
 * field, grouping the memberships, and `cards` puts the two together in the
 * card JSON (and in the field's choices), without either knowing the other.
 */
describe('group_type fields composed by cards', () => {
  let t: TestApp;
  let c: ReturnType<typeof fieldsClient>;
  let ann: TestUser;
  let w: World;
  let todo: number;
  let done: number;
  let membershipReads = 0;

  beforeAll(async () => {
    t = await createTestApp();
    c = fieldsClient(t);
    ann = await t.user();
    w = await c.world(ann);
    const type = (await t.http.post(`${API}/projects/${w.project}/group-types`).set(as(ann)).send({ name: 'Column' }).expect(201)).body;
    const group = async (title: string) =>
      (await t.http.post(`${API}/cards/${w.root}/groups`).set(as(ann)).send({ type_id: type.id, title }).expect(201)).body.id as number;
    todo = await group('To do');
    done = await group('Done');
    // Count the membership reads the card JSON costs (the real grouping API, observed).
    const grouping = t.app.get(GroupingApi);
    const read = grouping.membershipsOf.bind(grouping);
    grouping.membershipsOf = (cardIds) => {
      membershipReads++;
      return read(cardIds);
    };
  });
  afterAll(() => t.close());

  it('shows the groups in the card JSON, read with a listing’s rows', async () => {
    const a = await c.card(ann, w.root, 'A');
    expect(a.attributes.Column).toEqual([]);
    await t.http.post(`${API}/cards/${a.id}/add-to-group`).set(as(ann)).send({ group_id: done }).expect(200);
    const joined = (await t.http.post(`${API}/cards/${a.id}/add-to-group`).set(as(ann)).send({ group_id: todo }).expect(200)).body;
    expect(joined.attributes.Column).toEqual([todo, done]); // in the groups' order
    await t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'B', group_id: done }).expect(201);
    membershipReads = 0;
    const children = (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body;
    expect(children.map((x: { attributes: Record<string, unknown> }) => x.attributes.Column)).toEqual([[todo, done], [done]]);
    // in the children's statement (CardViewsService.childrenJson), not asked of grouping afterwards
    expect(membershipReads).toBe(0);
  });

  it('asks grouping for a project listing’s memberships while fields read the values', async () => {
    const events: string[] = [];
    const fields = t.app.get(FieldsApi);
    const grouping = t.app.get(GroupingApi);
    const [attributesOf, membershipsOf] = [fields.attributesOf, grouping.membershipsOf];
    fields.attributesOf = async (...args) => {
      events.push('values asked');
      const found = await attributesOf.apply(fields, args);
      events.push('values read');
      return found;
    };
    grouping.membershipsOf = (cardIds) => {
      events.push('memberships asked');
      return membershipsOf.call(grouping, cardIds);
    };
    try {
      const page = (await t.http.get(`${API}/projects/${w.project}/cards`).set(as(ann)).expect(200)).body;
      expect(page.some((x: { attributes: Record<string, unknown> }) => (x.attributes.Column as number[]).includes(done))).toBe(true);
      // The listing read the definitions with its page: grouping is asked before the values are back.
      expect(events.indexOf('memberships asked')).toBeLessThan(events.indexOf('values read'));
    } finally {
      Object.assign(fields, { attributesOf });
      Object.assign(grouping, { membershipsOf });
    }
  });

  it('reads the children’s values and memberships in the statement that reads their rows', async () => {
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      const children = (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body;
      expect(children.some((x: { attributes: Record<string, unknown> }) => (x.attributes.Column as number[]).includes(done))).toBe(true);
      const reading = sent.mock.calls.map(([text]) => String(text)).filter((text) => /grouping\.memberships|fields\.scalar_values/.test(text));
      // one statement, which also reads the children
      expect(reading).toHaveLength(1);
      expect(reading[0]).toMatch(/FROM cards\.cards/);
    } finally {
      sent.mockRestore();
    }
  });

  it('offers the groups the card may join as choices', async () => {
    const a = await c.card(ann, w.root, 'C');
    const res = await t.http.get(`${API}/cards/${a.id}/attributes/Column/choices`).set(as(ann)).expect(200);
    expect(res.body).toEqual([
      [todo, 'To do'],
      [done, 'Done'],
    ]);
  });
});
