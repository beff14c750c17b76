import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ProjectCardLocks } from '../../../src/modules/card-hierarchy/index.js';
import { UnitOfWork } from '../../../src/shared/persistence/unit-of-work.js';
import { storedUpdatedAt } from '../../support/card-rows.js';
import { deadlocks, deadlocksSince, sendWhileHeld, sendWhileHeldFor } from '../../support/lock-waits.js';
import { itOnPostgres } from '../../support/on-postgres.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from '../fields/fields-fixtures.js';

/**
 * Relationship values may name cards of other projects of the team
 * (DESIGN.md §4). Deleting a project deletes its cards, and with them the
 * values pointing at them that cards of the team's other projects hold:
 * those cards change, and like any change (§9) each gets its stream entry,
 * a `pop` of the lost entries by the deleting user, and its `updated_at`
 * moves. Before, the foreign key's cascade removed the values unseen.
 */
describe('deleting a project whose cards relationship values of other projects name', () => {
  let t: TestApp, ann: TestUser, c: FieldsClient, w: World;
  let linkId: number, otherId: number;

  beforeAll(async () => {
    ({ t, c, ann, w } = await fieldsWorld());
    linkId = (await c.field(ann, w.project, 'Link', 'relationships')).id;
    otherId = (await c.field(ann, w.project, 'Other', 'relationships')).id;
  });
  afterAll(() => t.close());

  const stamp = (card: number) => storedUpdatedAt(t.app, card);
  const changes = async (card: number) => (await c.stream(ann, card)).filter((e) => e.action === 'card.attribute_changed');
  const deleteProject = (project: number) => t.http.delete(`${API}/projects/${project}`).set(as(ann)).then((r) => r);
  /** A new project of the team to delete, with a relationships field of its own. */
  const doomedProject = async (title: string) => {
    const p = await c.project(ann, w.org, title);
    await c.field(ann, p.project, 'Back', 'relationships');
    return p;
  };

  it('records the lost entries on the cards of other projects that named its cards, and changes nothing else there', async () => {
    const p = await doomedProject('P');
    const naming = (await c.card(ann, w.root, 'names P')).id;
    const bystander = (await c.card(ann, w.root, 'names Q only')).id;
    const named = (await c.card(ann, w.root, 'named by P')).id;
    const doomed = (await c.card(ann, p.root, 'doomed')).id;
    const child = (await c.card(ann, doomed, 'doomed child')).id;
    await c.set(ann, naming, 'Link', [bystander, child]).expect(200);
    await c.set(ann, bystander, 'Link', [named]).expect(200);
    await c.set(ann, doomed, 'Back', [named]).expect(200);
    const at = await Promise.all([naming, bystander, named].map(stamp));
    const counts = await Promise.all([naming, bystander, named].map(async (card) => (await changes(card)).length));

    const res = await deleteProject(p.project);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: p.project, deleted: true });
    expect((await t.http.get(`${API}/projects/${p.project}`).set(as(ann))).status).toBe(404);
    const card = await c.get(ann, naming);
    expect(card.attributes.Link).toEqual([bystander]);
    expect(await stamp(naming)).not.toBe(at[0]);
    expect(Date.parse(card.updated_at)).toBeGreaterThanOrEqual(Date.parse(at[0]));
    const recorded = await changes(naming);
    expect(recorded).toHaveLength(counts[0] + 1);
    expect(recorded[0]).toMatchObject({
      kind: 'activity',
      user_id: ann.id,
      data: { attribute_id: linkId, attribute: 'Link', type: 'relationships', operation: 'pop', from: [bystander, child], to: [bystander], reason: 'target_deleted' },
    });
    // A card naming only cards of its own project, and one a card of the deleted project named.
    for (const [k, card] of [bystander, named].entries()) {
      expect(await stamp(card)).toBe(at[k + 1]);
      expect(await changes(card)).toHaveLength(counts[k + 1]);
    }
    expect((await c.get(ann, bystander)).attributes.Link).toEqual([named]);
  });

  it('records one entry per field that lost entries', async () => {
    const p = await doomedProject('P2');
    const naming = (await c.card(ann, w.root, 'names P2 twice')).id;
    const kept = (await c.card(ann, w.root, 'kept')).id;
    const [first, second, third] = [(await c.card(ann, p.root, 'first')).id, (await c.card(ann, p.root, 'second')).id, (await c.card(ann, p.root, 'third')).id];
    await c.setMany(ann, naming, { Link: [first, kept, second], Other: [third] }).expect(200);
    const before = (await changes(naming)).length;

    expect((await deleteProject(p.project)).status).toBe(200);

    expect((await c.get(ann, naming)).attributes).toMatchObject({ Link: [kept], Other: [] });
    const recorded = (await changes(naming)).slice(0, (await changes(naming)).length - before);
    expect(recorded.map((e) => e.data).sort((a, b) => Number(a.attribute_id) - Number(b.attribute_id))).toEqual([
      { attribute_id: linkId, attribute: 'Link', type: 'relationships', operation: 'pop', from: [first, kept, second], to: [kept], reason: 'target_deleted' },
      { attribute_id: otherId, attribute: 'Other', type: 'relationships', operation: 'pop', from: [third], to: [], reason: 'target_deleted' },
    ]);
  });

  /**
   * The lock of the project's cards is one statement, which sees the cards
   * of its snapshot: a card whose creation committed while the statement
   * waited for its parent is not among them, and a value could name it
   * unseen. A third transaction holds the top-level card and adds a child
   * under it (as a creation does); the lock waits, then must hold the child
   * too.
   */
  itOnPostgres('holds a card created under a parent while the lock of the project cards waits for it', async () => {
    const p = await c.project(ann, w.org, 'P4');
    const existing = (await c.card(ann, p.root, 'existing')).id;
    const created = `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, ref, title, position, depth)
                     VALUES (${p.project}, ${w.org}, ${p.root}, ARRAY[${p.root}]::bigint[], 1000, 'created meanwhile', 1, 1)`;
    const hold = { setup: [`SELECT 1 FROM cards.cards WHERE id = ${p.root} FOR UPDATE`, created], sql: 'SELECT 1', params: [] };
    const uow = t.app.get(UnitOfWork);

    const [held] = await sendWhileHeld(t.app, hold, [() => uow.run(() => t.app.get(ProjectCardLocks).lockProjectCards(p.project))]);

    const [{ id: child }] = await t.app.get(DataSource).query(`SELECT id FROM cards.cards WHERE project_id = $1 AND ref = 1000`, [p.project]);
    expect(held).toEqual([p.root, existing, Number(child)]);
  });

  /**
   * The cards naming the project are known only once all its cards are
   * held: a value write holding such a card and waiting for a card of the
   * project (an append naming it, taken after the card it writes since its
   * id is higher) must not be waited for. The deletion holds the project's
   * cards up to one a third transaction holds; the append comes in and
   * waits for a card the deletion holds; the third lets go. Waiting for the
   * appending card would be a deadlock; taken only if free, the deletion
   * runs again once the append is through, and records what it added too.
   */
  itOnPostgres('deletes the project while a value write on a card naming it waits for one of its cards: no deadlock', async () => {
    const naming = (await c.card(ann, w.root, 'names P3')).id;
    const p = await doomedProject('P3');
    const first = (await c.card(ann, p.root, 'first')).id;
    const appended = (await c.card(ann, p.root, 'appended')).id; // above the naming card: the append takes it after
    const last = (await c.card(ann, p.root, 'held')).id; // the deletion holds the cards below it while it waits
    await c.set(ann, naming, 'Link', [first]).expect(200);
    const held = { sql: `SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, params: [last] };
    const before = await deadlocks(t.app);

    const [deleted, append] = await sendWhileHeld(t.app, held, [
      () => deleteProject(p.project),
      () => c.append(ann, naming, 'Link', appended).then((r) => r),
    ]);

    expect([deleted.status, append.status]).toEqual([200, 200]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
    expect((await c.get(ann, naming)).attributes.Link).toEqual([]);
    expect((await changes(naming))[0].data).toMatchObject({ operation: 'pop', from: [first, appended], to: [], reason: 'target_deleted' });
  }, 30_000);

  /**
   * A card naming the project may be held by a long write that waits for
   * nothing of the deletion's (an import in another project). Taken only if
   * free, it is tried again until let go, the project's cards held all the
   * while: they are locked once. Running the whole unit again relocked them
   * at every try, and a project whose lock alone took longer than the 15 s
   * budget for retries answered 503 at its first 55P03, whatever the hold.
   */
  itOnPostgres('waits out a card naming the project that a write elsewhere holds, locking the project cards once', async () => {
    const p = await doomedProject('P5');
    const target = (await c.card(ann, p.root, 'target')).id;
    const naming = (await c.card(ann, w.root, 'names P5')).id;
    await c.set(ann, naming, 'Link', [target]).expect(200);
    const held = { sql: `SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, params: [naming] };
    const projectCardLocks = { on: t.app.get(ProjectCardLocks), method: 'lockProjectCards' };

    const { answer, answeredWhileHeld, calls } = await sendWhileHeldFor(t.app, held, 2_000, () => deleteProject(p.project), projectCardLocks);

    expect([answeredWhileHeld, answer.status, calls]).toEqual([false, 200, 1]);
    expect((await c.get(ann, naming)).attributes.Link).toEqual([]);
    expect((await changes(naming))[0].data).toMatchObject({ operation: 'pop', from: [target], to: [], reason: 'target_deleted' });
  }, 30_000);
});
