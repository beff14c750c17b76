import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { untilWaitingForLocks } from '../../support/lock-waits.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';
import { describeOnPostgres } from '../../support/on-postgres.js';

/**
 * A batch of values that goes the locking path (a list value in it) is
 * planned before its transaction. A field it names, deleted between the
 * plan and the write, is named in the body: DESIGN.md §2 wants the 400 of
 * an unknown field naming it. Its value's foreign key said only 404 "not
 * found", after a re-run of the same plan.
 */
// Two transactions at once: the embedded database runs one at a time.
describeOnPostgres('a field deleted while a batch of values waits to be written', () => {
  let t: TestApp, ann: TestUser, c: FieldsClient, world: World;

  beforeAll(async () => {
    ({ t, c, ann, w: world } = await fieldsWorld());
    await c.field(ann, world.project, 'Owners', 'members');
  });
  afterAll(() => t.close());

  it('answers 400 naming the deleted field, and writes none of the batch', async () => {
    const gone = await c.field(ann, world.project, 'Gone soon', 'text');
    const card = (await c.card(ann, world.root, 'batch')).id;
    const holder = t.app.get(DataSource).createQueryRunner();
    await holder.connect();
    let pending: Promise<{ status: number; body: Record<string, unknown> }>;
    try {
      await holder.startTransaction();
      await holder.query(`SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, [card]);
      // Planned now; its transaction waits for the card, while the field goes.
      pending = c.setMany(ann, card, { attributes: { 'Gone soon': 'text', Owners: [ann.id] } }).then((r) => r);
      await untilWaitingForLocks(t.app, 1);
      await t.http.delete(`${API}/attributes/${gone.id}`).set(as(ann)).expect(200);
    } finally {
      await holder.commitTransaction();
      await holder.release();
    }
    const res = await pending;
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'Gone soon', message: 'no field "Gone soon"' }]);
    expect((await c.get(ann, card)).attributes).toEqual({ Owners: [] });
  }, 30_000);
});
