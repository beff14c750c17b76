import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CardHierarchyApi } from '../../../src/modules/card-hierarchy/index.js';
import { CardsApi } from '../../../src/modules/cards/index.js';
import type { Actor } from '../../../src/shared/domain/actor.js';
import { ConflictError } from '../../../src/shared/domain/domain-error.js';
import { CardAttributeChanged, CardCreated, CommentsAdded, EventBus, type AppEvent } from '../../../src/shared/events/index.js';
import { Sql } from '../../../src/shared/persistence/sql.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardClient, type CardClient, type ProjectJson } from './card-fixtures.js';

/**
 * What a module extending cardwork gets from the bus, through the real write
 * paths: handlers of single card events see the events that arrive in
 * batches too, an in-tx handler runs in the change's transaction even on the
 * one-statement paths (a card created alone, a guarded value set), and
 * comments publish `CommentsAdded`.
 */
describe('event handlers of an extending module', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson, top: number, actor: Actor;
  /** What the in-tx handler does: nothing, one statement, or one statement and then refuse the change. */
  let inTx: 'off' | 'query' | 'refuse' = 'off';
  const afterCommit: string[] = [];
  const comments: CommentsAdded[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    c = cardClient(t);
    ann = await t.user();
    actor = { userId: ann.id, username: ann.username, isAdmin: false, scopes: null };
    project = await c.project(ann, await c.team(ann));
    top = project.top_level_card_id;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Estimate', type: 'number' }).expect(201);
    const bus = t.app.get(EventBus);
    const sql = t.app.get(Sql);
    const extension = async (): Promise<void> => {
      if (inTx === 'off') return;
      await sql.run('SELECT 1');
      if (inTx === 'refuse') throw new ConflictError('the extension refuses this change', 'EXTENSION.REFUSED');
    };
    bus.subscribe([CardCreated, CardAttributeChanged], 'in-tx', extension);
    bus.subscribe(CardCreated, 'after-commit', (e) => void afterCommit.push(`created ${(e as CardCreated).data.title}`));
    bus.subscribe(CardAttributeChanged, 'after-commit', (e) => {
      const { cardId, data } = e as CardAttributeChanged;
      afterCommit.push(`${cardId} ${data.attribute} ${JSON.stringify(data.from)} -> ${JSON.stringify(data.to)}`);
    });
    bus.subscribe(CommentsAdded, 'in-tx', async (e: AppEvent) => {
      await extension();
      comments.push(e as CommentsAdded);
    });
  });
  afterAll(() => t.close());
  beforeEach(() => {
    inTx = 'off';
    afterCommit.length = 0;
    comments.length = 0;
  });

  const setValues = (id: number, body: Record<string, unknown>, status: number) =>
    t.http.post(`${API}/cards/${id}/attributes`).set(as(ann)).send(body).expect(status);

  describe('an in-tx handler that runs a statement or refuses', () => {
    it('runs in the transaction of a card created alone: the card is created, or refused with the handler\'s error and not created', async () => {
      inTx = 'query';
      const made = await c.create(ann, top, 'made with the extension');
      inTx = 'refuse';
      const res = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'refused' }).expect(409);
      expect(res.body).toMatchObject({ status: 409, type: 'EXTENSION.REFUSED' });
      inTx = 'off';
      const titles = (await c.children(ann, top)).map((x) => x.title);
      expect(titles).toContain(made.title);
      expect(titles).not.toContain('refused');
    });

    it('runs in the transaction of a guarded value set: the value is set, or refused and left as it was', async () => {
      const card = await c.create(ann, top, 'valued');
      inTx = 'query';
      expect((await setValues(card.id, { Estimate: 3 }, 200)).body.attributes).toEqual({ Estimate: 3 });
      inTx = 'refuse';
      await setValues(card.id, { Estimate: 5 }, 409);
      inTx = 'off';
      expect((await c.get(ann, card.id)).attributes).toEqual({ Estimate: 3 });
      expect((await c.stream(ann, card.id)).map((e) => e.action)).toEqual(['card.attribute_changed', 'card.created']);
    });
  });

  describe('handlers of single card events', () => {
    it('see each card created, alone, with values or in a batch', async () => {
      const alone = await c.create(ann, top, 'alone');
      await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'with a value', attributes: { Estimate: 1 } }).expect(201);
      await t.app.get(CardsApi).createMany(alone.id, [{ title: 'batch 1', children: [{ title: 'batch 1.1' }] }, { title: 'batch 2' }], actor);
      expect(afterCommit.filter((e) => e.startsWith('created'))).toEqual([
        'created alone',
        'created with a value',
        'created batch 1', // a batch is created level by level
        'created batch 2',
        'created batch 1.1',
      ]);
    });

    it('see each value set: guarded, on the locking path and in a batch', async () => {
      const card = await c.create(ann, top, 'estimated');
      await setValues(card.id, { Estimate: 2 }, 200); // the guarded statement
      await setValues(card.id, { Estimate: null }, 200); // clearing takes the locking path
      const [made] = await t.app.get(CardsApi).createMany(top, [{ title: 'batch', attributes: { Estimate: '7' } }], actor);
      expect(afterCommit.filter((e) => !e.startsWith('created'))).toEqual([
        `${card.id} Estimate null -> 2`,
        `${card.id} Estimate 2 -> null`,
        `${made.id} Estimate null -> 7`,
      ]);
    });
  });

  describe('CommentsAdded', () => {
    it('is published in the comment\'s transaction with its ids, and is no stream entry of its own', async () => {
      const card = await c.create(ann, top, 'commented');
      inTx = 'query';
      const res = await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send({ content: 'first' }).expect(201);
      expect(comments).toHaveLength(1);
      expect(comments[0]).toMatchObject({ name: 'comments.added', projectId: project.id, cardIds: [card.id], commentIds: [res.body.id], actorId: ann.id });
      inTx = 'refuse';
      await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send({ content: 'refused' }).expect(409);
      inTx = 'off';
      const entries = await c.stream(ann, card.id);
      expect(entries.map((e) => [e.action, e.content])).toEqual([
        ['comment.added', 'first'],
        ['card.created', null],
      ]);
    });

    it('names every comment of a bulk write, in order, once per project', async () => {
      const a = await c.create(ann, top, 'a');
      const b = await c.create(ann, top, 'b');
      const hierarchy = t.app.get(CardHierarchyApi);
      await hierarchy.addComments([{ cardId: b.id, content: 'one' }, { cardId: a.id, content: 'two' }, { cardId: b.id, content: 'three' }], actor);
      expect(comments).toHaveLength(1);
      const [added] = comments;
      expect(added).toMatchObject({ projectId: project.id, cardIds: [b.id, a.id, b.id], actorId: ann.id });
      const idOf = async (cardId: number, content: string) => (await c.stream(ann, cardId)).find((e) => e.content === content)!.id;
      expect(added.commentIds).toEqual([await idOf(b.id, 'one'), await idOf(a.id, 'two'), await idOf(b.id, 'three')]);
    });
  });
});
