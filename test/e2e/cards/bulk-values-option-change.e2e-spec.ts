import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { CardHierarchyApi } from '../../../src/modules/card-hierarchy/index.js';
import { CardsApi } from '../../../src/modules/cards/index.js';
import { FieldsApi } from '../../../src/modules/fields/index.js';
import type { Actor } from '../../../src/shared/domain/actor.js';
import { UnitOfWork } from '../../../src/shared/persistence/unit-of-work.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingClient, type ProjectJson } from '../grouping/grouping-fixtures.js';

/**
 * The bulk value writes (CardsApi.createPrepared and createMany, which write
 * new cards' values along with their insert or after their groups;
 * FieldsApi.writeValuesMany, an import's updates) take values parsed before
 * their transaction. A date field's `time`/`period` change that commits in
 * between must not let a value the field no longer allows in: the writes
 * hold the date fields they write FOR SHARE and parse those values again
 * under the options then current (400). Each test parses, then changes the
 * options (committed), then writes: the order of a change that commits
 * first. Each stored a period on a field without the option before.
 */
describe('bulk value writes after a date field’s options changed', () => {
  let t: TestApp;
  let cards: CardsApi;
  let fields: FieldsApi;
  let ann: TestUser;
  let actor: Actor;
  let project: ProjectJson;
  let c: ReturnType<typeof groupingClient>;
  let n = 0;

  beforeAll(async () => {
    t = await createTestApp();
    cards = t.app.get(CardsApi);
    fields = t.app.get(FieldsApi);
    ann = await t.user();
    actor = { userId: ann.id, username: ann.username, isAdmin: false, scopes: null };
    c = groupingClient(t);
    project = await c.project(ann, await c.team(ann));
  });
  afterAll(() => t.close());

  const PERIOD = '2026-01-01 -> 2026-01-03';

  /** A new period field, and the options change that narrows it (no value yet: 200). */
  async function periodField() {
    const name = `Span ${++n}`;
    const field = (await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name, type: 'date', options: { period: true } }).expect(201)).body;
    const narrow = () => t.http.put(`${API}/attributes/${field.id}`).set(as(ann)).send({ options: { period: false } }).expect(200);
    return { id: field.id as number, name, narrow };
  }

  const refusal = (name: string) => ({ errors: [{ field: name, message: expect.stringContaining('expected a date') }] });
  const valuesOf = async (name: string) => (await c.allCards(ann, project.id)).map((card) => (card.attributes as Record<string, unknown>)[name]).filter((v) => v !== null && v !== undefined);

  it('refuses a new card’s value written along with its insert (newValuesAlong)', async () => {
    const { name, narrow } = await periodField();
    const before = (await c.allCards(ann, project.id)).length;
    const batch = await cards.prepareMany(project.id, [{ title: 'along', attributes: { [name]: PERIOD } }], await fields.projectFields(project.id));
    await narrow();
    await expect(cards.createPrepared(project.top_level_card_id, batch, actor, { system: true })).rejects.toMatchObject(refusal(name));
    expect((await c.allCards(ann, project.id)).length).toBe(before);
    expect(await valuesOf(name)).toEqual([]);
  });

  it('refuses a new card’s value written after its groups (writeNewValues)', async () => {
    const { name, narrow } = await periodField();
    const type = await cards.ensureGroupType(project.id, `Context ${n}`, false, actor);
    const group = await c.group(ann, project.top_level_card_id, type.id, 'Backend');
    const batch = await cards.prepareMany(project.id, [{ title: 'grouped', attributes: { [name]: PERIOD }, groupIds: [group.id] }], await fields.projectFields(project.id));
    await narrow();
    await expect(cards.createPrepared(project.top_level_card_id, batch, actor, { system: true })).rejects.toMatchObject(refusal(name));
    expect(await valuesOf(name)).toEqual([]);
  });

  it('refuses an existing card’s value written in bulk (writeValuesMany)', async () => {
    const { name, narrow } = await periodField();
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: 'matched' }).expect(201)).body;
    const [prepared] = await fields.prepareValues(project.id, [{ attributes: { [name]: PERIOD }, property: 'attributes' }], actor, await fields.projectFields(project.id));
    await narrow();
    const write = t.app.get(UnitOfWork).run(async () => {
      const [locked] = await t.app.get(CardHierarchyApi).lockCards([card.id], actor, 'write');
      return fields.writeValuesMany([{ card: locked, prepared }], actor, { system: true });
    });
    await expect(write).rejects.toMatchObject(refusal(name));
    expect(await valuesOf(name)).toEqual([]);
  });

  /** The texts of the statements `run` sent that lock field rows FOR SHARE. */
  async function fieldLocks(run: () => Promise<unknown>): Promise<string[]> {
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      await run();
      return sent.mock.calls.map(([text]) => String(text)).filter((text) => /FROM fields\.attributes[\s\S]*FOR SHARE/.test(text));
    } finally {
      sent.mockRestore();
    }
  }

  it('writes a value the options still allow, holding its field; a batch without dates locks no field', async () => {
    const { name } = await periodField();
    const batch = await cards.prepareMany(project.id, [{ title: 'kept', attributes: { [name]: PERIOD } }], await fields.projectFields(project.id));
    let created: Awaited<ReturnType<CardsApi['createPrepared']>> = [];
    expect(await fieldLocks(async () => (created = await cards.createPrepared(project.top_level_card_id, batch, actor)))).toHaveLength(1);
    const kept = (await c.get(ann, created[0].id)).attributes as Record<string, unknown>;
    expect(kept[name]).toEqual({ start: '2026-01-01', end: '2026-01-03' });
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
    const plain = await cards.prepareMany(project.id, [{ title: 'plain', attributes: { Estimate: '3' } }], await fields.projectFields(project.id));
    expect(await fieldLocks(() => cards.createPrepared(project.top_level_card_id, plain, actor))).toEqual([]);
  });
});
