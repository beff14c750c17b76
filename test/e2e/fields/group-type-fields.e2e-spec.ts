import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FieldsApi } from '../../../src/modules/fields/index.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsClient, type World } from './fields-fixtures.js';

/** How fields shows group_type values and choices through the functions grouping hands it. */
describe('group_type fields through the FieldsApi providers', () => {
  let t: TestApp;
  let c: ReturnType<typeof fieldsClient>;
  let ann: TestUser;
  let w: World;
  const GROUP_TYPE = 777_001;
  const calls: Array<[number[], number[]]> = [];

  beforeAll(async () => {
    t = await createTestApp();
    c = fieldsClient(t);
    ann = await t.user();
    w = await c.world(ann);
    const api = t.app.get(FieldsApi);
    await api.createGroupTypeField({ projectId: w.project, groupTypeId: GROUP_TYPE, name: 'Column' });
    // Stand-in for grouping: every card is in groups 11 and 12 of the type; choices are fixed.
    api.registerGroupTypeProviders(
      async (cardIds, groupTypeIds) => {
        calls.push([cardIds, groupTypeIds]);
        return new Map(cardIds.map((id) => [id, new Map(groupTypeIds.map((g) => [g, g === GROUP_TYPE ? [11, 12] : []]))]));
      },
      async (groupTypeId, cardId) => (groupTypeId === GROUP_TYPE ? [[11, `To do (${cardId})`], [12, 'Done']] : []),
    );
  });
  afterAll(() => t.close());

  it('shows the groups in the card JSON, fetched once for a whole listing', async () => {
    const a = await c.card(ann, w.root, 'A');
    await c.card(ann, w.root, 'B');
    expect(a.attributes.Column).toEqual([11, 12]);
    calls.length = 0;
    const children = (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body;
    expect(children.map((x: { attributes: Record<string, unknown> }) => x.attributes.Column)).toEqual([
      [11, 12],
      [11, 12],
    ]);
    expect(calls).toHaveLength(1);
    expect(calls[0][1]).toEqual([GROUP_TYPE]);
  });

  it('offers the groups as choices', async () => {
    const a = await c.card(ann, w.root, 'C');
    const res = await t.http.get(`${API}/cards/${a.id}/attributes/Column/choices`).set(as(ann)).expect(200);
    expect(res.body).toEqual([
      [11, `To do (${a.id})`],
      [12, 'Done'],
    ]);
  });
});
