import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { CardsApi, type NewCard } from '../../../src/modules/cards/index.js';
import { FieldsApi } from '../../../src/modules/fields/index.js';
import type { Actor } from '../../../src/shared/domain/actor.js';
import { UnitOfWork } from '../../../src/shared/persistence/unit-of-work.js';
import { requestStatements } from '../../support/request-statements.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingClient, type ProjectJson } from '../grouping/grouping-fixtures.js';

/** CardsApi.createMany: what the importer builds on (cards with values, groups and children, all or nothing). */
describe('CardsApi.createMany', () => {
  let t: TestApp;
  let api: CardsApi;
  let ann: TestUser;
  let actor: Actor;
  let project: ProjectJson;
  let c: ReturnType<typeof groupingClient>;

  beforeAll(async () => {
    t = await createTestApp();
    api = t.app.get(CardsApi);
    ann = await t.user();
    actor = { userId: ann.id, username: ann.username, isAdmin: false, scopes: null };
    c = groupingClient(t);
    project = await c.project(ann, await c.team(ann));
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
  });
  afterAll(() => t.close());

  it('creates cards with values, groups and children in one go, recorded as system work', async () => {
    const type = await api.ensureGroupType(project.id, 'Context', false, actor);
    const backend = await c.group(ann, project.top_level_card_id, type.id, 'Backend');
    const frontend = await c.group(ann, project.top_level_card_id, type.id, 'Frontend');
    const created = await api.createMany(
      project.top_level_card_id,
      [
        { title: 'Row 1', attributes: { Estimate: '3' }, groupIds: [frontend.id, backend.id], children: [{ title: 'Sub 1' }] },
        { title: 'Row 2', groupIds: [backend.id] },
      ],
      actor,
      { system: true },
    );
    // One bulk insert per level: the batch's own cards take refs first, then their children.
    expect(created).toEqual([
      { id: expect.any(Number), ref: 1, parentId: project.top_level_card_id, children: [{ id: expect.any(Number), ref: 3, parentId: created[0].id, children: [] }] },
      { id: expect.any(Number), ref: 2, parentId: project.top_level_card_id, children: [] },
    ]);
    const row1 = await c.get(ann, created[0].id);
    expect(row1.attributes).toEqual({ Estimate: 3, Context: [backend.id, frontend.id] });
    expect(row1.groups.map((g) => g.id)).toEqual([backend.id, frontend.id]);
    expect(await c.column(ann, project.id, backend.id)).toEqual([created[0].id, created[1].id]);
    expect((await c.get(ann, created[0].children[0].id)).parent_id).toBe(created[0].id);
    const kinds = new Set((await c.stream(ann, created[0].id)).map((e) => `${e.kind}:${e.action}`));
    expect(kinds).toEqual(new Set(['log:card.created', 'log:card.group_changed', 'log:card.attribute_changed']));
  });

  it('records the same stream entries as one card created with its values, in the same order', async () => {
    // Both paths write the `card.created` entry in their insert statement
    // (writing along); a single creation's values have the stream writer
    // record their events, the bulk path writes those along too.
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Notes', type: 'text' }).expect(201);
    const one = (
      await t.http
        .post(`${API}/cards/${project.top_level_card_id}/children`)
        .set(as(ann))
        .send({ title: 'Single', attributes: { Estimate: 2, Notes: 'a "quoted"\nline' } })
        .expect(201)
    ).body as { id: number; ref: number };
    const [bulk] = await api.createMany(project.top_level_card_id, [{ title: 'Single', attributes: { Estimate: '2', Notes: 'a "quoted"\nline' } }], actor);
    const shape = (entries: Awaited<ReturnType<typeof c.stream>>, ref: number) =>
      entries.map((e) => ({ kind: e.kind, action: e.action, user_id: e.user_id, content: e.content, data: e.action === 'card.created' ? { ...e.data, ref: ref - Number(e.data.ref) } : e.data }));
    const single = shape(await c.stream(ann, one.id), one.ref);
    expect(single.map((e) => e.action)).toEqual(['card.attribute_changed', 'card.attribute_changed', 'card.created']);
    expect(single[2]).toEqual({ kind: 'activity', action: 'card.created', user_id: ann.id, content: null, data: { title: 'Single', ref: 0, parent_id: project.top_level_card_id } });
    expect(shape(await c.stream(ann, bulk.id), bulk.ref)).toEqual(single);
    // as system work: the same entries as logs
    const [system] = await api.createMany(project.top_level_card_id, [{ title: 'Single', attributes: { Estimate: '2', Notes: 'a "quoted"\nline' } }], actor, { system: true });
    expect(shape(await c.stream(ann, system.id), system.ref)).toEqual(single.map((e) => ({ ...e, kind: 'log' })));
  });

  it('writes nothing when one card of the batch is refused, and names it', async () => {
    const before = (await c.allCards(ann, project.id)).length;
    await expect(
      api.createMany(project.top_level_card_id, [{ title: 'ok' }, { title: 'bad', children: [{ title: 'x', attributes: { Estimate: 'lots' } }] }], actor),
    ).rejects.toMatchObject({ errors: [{ field: 'cards[1].children[0].attributes.Estimate', message: 'expected a number' }] });
    await expect(api.createMany(project.top_level_card_id, [{ title: 'ok' }, { title: 'bad', groupIds: [999_999] }], actor)).rejects.toMatchObject({
      errors: [{ field: 'cards[1].group_ids' }],
    });
    expect((await c.allCards(ann, project.id)).length).toBe(before);
  });
});

const actorOf = (u: TestUser): Actor => ({ userId: u.id, username: u.username, isAdmin: false, scopes: null });

/** An app with a user, their team and a project with a number field `Estimate`: what the prepared-batch suites start from. */
async function projectWithEstimate() {
  const t = await createTestApp();
  const ann = await t.user();
  const c = groupingClient(t);
  const team = await c.team(ann);
  const project = await c.project(ann, team);
  await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
  return { t, api: t.app.get(CardsApi), fields: t.app.get(FieldsApi), ann, actor: actorOf(ann), c, team, project };
}

/** prepareMany + createPrepared: createMany in two halves, as an import writes its batches. */
describe('CardsApi.prepareMany and createPrepared', () => {
  let t: TestApp;
  let api: CardsApi;
  let fields: FieldsApi;
  let ann: TestUser;
  let actor: Actor;
  let team: number;
  let project: ProjectJson;
  let c: ReturnType<typeof groupingClient>;

  beforeAll(async () => {
    ({ t, api, fields, ann, actor, c, team, project } = await projectWithEstimate());
  });
  afterAll(() => t.close());

  it('writes what createMany writes: the cards, their children and values, refs in batch order', async () => {
    const batch = await api.prepareMany(project.id, [{ title: 'A', attributes: { Estimate: '4' }, children: [{ title: 'A.1' }] }, { title: 'B' }], await fields.projectFields(project.id));
    expect(batch.size).toBe(3);
    const created = await api.createPrepared(project.top_level_card_id, batch, actor, { system: true });
    expect(created).toEqual([
      { id: expect.any(Number), ref: 1, parentId: project.top_level_card_id, children: [{ id: expect.any(Number), ref: 3, parentId: created[0].id, children: [] }] },
      { id: expect.any(Number), ref: 2, parentId: project.top_level_card_id, children: [] },
    ]);
    expect((await c.get(ann, created[0].id)).attributes).toEqual({ Estimate: 4 });
    expect((await c.stream(ann, created[0].id)).map((e) => `${e.kind}:${e.action}`)).toEqual(['log:card.attribute_changed', 'log:card.created']);
  });

  it('writes the values after the insert when one card has a value that cannot go along (an unset)', async () => {
    const batch = await api.prepareMany(project.id, [{ title: 'C', attributes: { Estimate: '6' } }, { title: 'D', attributes: { Estimate: null } }], await fields.projectFields(project.id));
    const [c6, d] = await api.createPrepared(project.top_level_card_id, batch, actor);
    expect((await c.get(ann, c6.id)).attributes).toEqual({ Estimate: 6 });
    expect((await c.get(ann, d.id)).attributes).toEqual({ Estimate: null });
    expect((await c.stream(ann, c6.id)).map((e) => e.action)).toEqual(['card.attribute_changed', 'card.created']);
  });

  it('refuses a bad value while preparing, naming it, before anything is written', async () => {
    const before = (await c.allCards(ann, project.id)).length;
    await expect(
      api.prepareMany(project.id, [{ title: 'ok' }, { title: 'bad', attributes: { Estimate: 'lots' } }], await fields.projectFields(project.id)),
    ).rejects.toMatchObject({ errors: [{ field: 'cards[1].attributes.Estimate', message: 'expected a number' }] });
    expect((await c.allCards(ann, project.id)).length).toBe(before);
  });

  it("checks the writer's access on the locked parent: a viewer writes nothing", async () => {
    const vic = await t.user();
    await c.addMember(ann, team, vic, 'viewer');
    const before = (await c.allCards(ann, project.id)).length;
    const batch = await api.prepareMany(project.id, [{ title: 'by a viewer', attributes: { Estimate: '1' } }], await fields.projectFields(project.id));
    await expect(api.createPrepared(project.top_level_card_id, batch, actorOf(vic))).rejects.toMatchObject({ kind: 'forbidden' });
    expect((await c.allCards(ann, project.id)).length).toBe(before);
  });

  it("refuses a batch whose values were parsed for another project's fields, writing nothing", async () => {
    const other = await c.project(ann, team, 'Other');
    const before = (await c.allCards(ann, other.id)).length;
    const batch = await api.prepareMany(project.id, [{ title: 'misplaced', attributes: { Estimate: '1' } }], await fields.projectFields(project.id));
    await expect(api.createPrepared(other.top_level_card_id, batch, actor)).rejects.toThrow(/prepareValues/);
    expect((await c.allCards(ann, other.id)).length).toBe(before);
    // and definitions of one project do not parse values for another
    await expect(api.prepareMany(other.id, [{ title: 'x', attributes: { Estimate: '1' } }], await fields.projectFields(project.id))).rejects.toThrow(/ProjectFields/);
  });
});

/** openBatches: prepared batches under one parent, one statement each, as an import's write pass sends them. */
describe('CardsApi.openBatches', () => {
  let t: TestApp;
  let api: CardsApi;
  let fields: FieldsApi;
  let uow: UnitOfWork;
  let ann: TestUser;
  let actor: Actor;
  let team: number;
  let project: ProjectJson;
  let c: ReturnType<typeof groupingClient>;
  const prepare = async (cards: NewCard[]) => api.prepareMany(project.id, cards, await fields.projectFields(project.id));

  beforeAll(async () => {
    ({ t, api, fields, ann, actor, c, team, project } = await projectWithEstimate());
    uow = t.app.get(UnitOfWork);
  });
  afterAll(() => t.close());

  it('sends batches one after another, refs and positions in order, each batch recorded as createPrepared records it', async () => {
    const first = await prepare([{ title: 'A', attributes: { Estimate: '1' } }, { title: 'B' }]);
    const second = await prepare([{ title: 'C', attributes: { Estimate: '3' } }]);
    const created = await uow.run(async () => {
      const batches = await api.openBatches(project.top_level_card_id, actor, { system: true });
      const readyFirst = batches.ready(first)!;
      const readySecond = batches.ready(second)!; // built before the first is sent
      const sending = readyFirst.send();
      // Not before the first has returned: its refs and positions depend on it.
      await expect(readySecond.send()).rejects.toThrow(/returned/);
      const sentFirst = await sending;
      const sentSecond = await readySecond.send();
      await sentFirst.publish();
      await sentSecond.publish();
      return [...sentFirst.created, ...sentSecond.created];
    });
    expect(created.map((x) => [x.ref, x.parentId, x.children])).toEqual([
      [1, project.top_level_card_id, []],
      [2, project.top_level_card_id, []],
      [3, project.top_level_card_id, []],
    ]);
    const cards = await Promise.all(created.map((x) => c.get(ann, x.id)));
    expect(cards.map((x) => [x.title, x.position, (x.attributes as Record<string, unknown>).Estimate])).toEqual([
      ['A', 0, 1],
      ['B', 1, null],
      ['C', 2, 3],
    ]);
    expect((await c.stream(ann, created[0].id)).map((e) => `${e.kind}:${e.action}`)).toEqual(['log:card.attribute_changed', 'log:card.created']);
    expect((await c.stream(ann, created[1].id)).map((e) => `${e.kind}:${e.action}`)).toEqual(['log:card.created']);
  });

  it('leaves to createPrepared what is not one statement: children, groups, values that cannot go along', async () => {
    const type = await c.type(ann, project.id, 'Kind');
    const group = await c.group(ann, project.top_level_card_id, type.id, 'g');
    const batches = [
      await prepare([{ title: 'parent', children: [{ title: 'child' }] }]),
      await prepare([{ title: 'grouped', groupIds: [group.id] }]),
      await prepare([{ title: 'unset', attributes: { Estimate: null } }]),
      await prepare([]),
    ];
    await uow.run(async () => {
      const sequence = await api.openBatches(project.top_level_card_id, actor);
      expect(batches.map((b) => sequence.ready(b))).toEqual([undefined, undefined, undefined, undefined]);
    });
  });

  it('sends a ready batch once, and only in the transaction that opened the sequence', async () => {
    const once = await prepare([{ title: 'once' }]);
    const elsewhere = await prepare([{ title: 'elsewhere' }]);
    let leaked: { send(): Promise<unknown> } | undefined;
    const created = await uow.run(async () => {
      const batches = await api.openBatches(project.top_level_card_id, actor);
      const ready = batches.ready(once)!;
      const sent = await ready.send();
      await expect(ready.send()).rejects.toThrow(/once/);
      await sent.publish();
      leaked = batches.ready(elsewhere)!;
      return sent.created;
    });
    expect(created).toHaveLength(1);
    const titles = async () => (await c.allCards(ann, project.id)).map((x) => x.title);
    expect((await titles()).filter((x) => x === 'once')).toHaveLength(1);
    // The parent's lock ended with that transaction; another must not skip it.
    await expect(uow.run(() => leaked!.send())).rejects.toThrow(/transaction/);
    expect(await titles()).not.toContain('elsewhere');
  });

  it("checks the writer's access on the locked parent when it opens, and runs only inside a unit of work", async () => {
    const vic = await t.user();
    await c.addMember(ann, team, vic, 'viewer');
    await expect(uow.run(() => api.openBatches(project.top_level_card_id, actorOf(vic)))).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(api.openBatches(project.top_level_card_id, actor)).rejects.toThrow(/unit of work/);
  });
});

/**
 * POST /cards/{id}/children without values or group: the answer is built from
 * the inserted row and the project's field definitions read while the parent
 * was locked (no read after the commit). It must show exactly that project's
 * fields, unset, as a later GET does.
 */
describe('the card JSON of a new card without values', () => {
  let t: TestApp;
  let ann: TestUser;
  let c: ReturnType<typeof groupingClient>;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    c = groupingClient(t);
  });
  afterAll(() => t.close());

  it("shows its own project's fields unset, never another project's or a model's", async () => {
    const team = await c.team(ann);
    const mine = await c.project(ann, team);
    const other = await c.project(ann, team);
    const field = (project: ProjectJson, body: object) => t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send(body).expect(201);
    await field(mine, { name: 'Estimate', type: 'number' });
    await field(mine, { name: 'Owners', type: 'members' });
    await field(other, { name: 'Elsewhere', type: 'text' });
    const model = (await t.http.post(`${API}/projects/${mine.id}/models`).set(as(ann)).send({ name: 'Bug' }).expect(201)).body as { id: number };
    await t.http.post(`${API}/models/${model.id}/attributes`).set(as(ann)).send({ name: 'Severity', type: 'text' }).expect(201);
    await t.http.post(`${API}/projects/${mine.id}/group-types`).set(as(ann)).send({ name: 'Status', one_group_per_card: true }).expect(201);

    const res = await t.http.post(`${API}/cards/${mine.top_level_card_id}/children`).set(as(ann)).send({ title: 'New' }).expect(201);
    expect(res.body.attributes).toEqual({ Estimate: null, Owners: [], Status: [] });
    expect(res.body.groups).toEqual([]);
    const { body: read } = await t.http.get(`${API}/cards/${res.body.id}`).set(as(ann)).expect(200);
    expect(res.body).toEqual(read);

    const bare = await t.http.post(`${API}/cards/${other.top_level_card_id}/children`).set(as(ann)).send({ title: 'Other' }).expect(201);
    expect(bare.body.attributes).toEqual({ Elsewhere: null });
  });

  it('costs two statements: the key, then one that locks the parent, checks the caller and inserts the row with its stream entry, without BEGIN and COMMIT', async () => {
    const project = await c.project(ann, await c.team(ann));
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      const res = await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: 'Counted' }).expect(201);
      const statements = requestStatements(sent.mock.calls);
      // authentication (with its rate-limit hit), then the parent's lock with the insert (UnitOfWork.runStatement)
      expect(statements).toEqual([expect.any(String), 'WITH parent']);
      const stream = (await t.http.get(`${API}/cards/${res.body.id}/stream`).set(as(ann)).expect(200)).body as Array<{ action: string; data: object }>;
      expect(stream.map((e) => [e.action, e.data])).toEqual([['card.created', { title: 'Counted', ref: res.body.ref, parent_id: project.top_level_card_id }]]);
    } finally {
      sent.mockRestore();
    }
  });
});
