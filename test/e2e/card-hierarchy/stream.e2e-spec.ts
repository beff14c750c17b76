import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CardStreamRecorder } from '../../../src/modules/card-hierarchy/activity/card-stream.recorder.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardWorld, type CardClient, type ProjectJson, type StreamEntryJson } from './card-fixtures.js';

describe('card stream', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson, top: number;
  beforeAll(async () => ({ t, c, ann, project, root: top } = await cardWorld({ team: 'Stream', project: 'S' })));
  afterAll(() => t.close());

  const actions = (entries: StreamEntryJson[]) => entries.map((e) => e.action);

  it('records every change as an activity, newest first', async () => {
    const card = await c.create(ann, top, 'tracked');
    const other = await c.create(ann, top, 'other parent');
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ title: 'renamed' }).expect(200);
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ state: 'in_progress' }).expect(200);
    await t.http.post(`${API}/cards/${card.id}/state`).set(as(ann)).send({ state: 'completed' }).expect(200);
    await c.relocate(ann, card.id, { parent_id: other.id });
    await t.http.post(`${API}/cards/${card.id}/archive`).set(as(ann)).expect(200);
    await t.http.delete(`${API}/cards/${card.id}/archive`).set(as(ann)).expect(200);

    const entries = await c.stream(ann, card.id);
    expect(actions(entries)).toEqual([
      'card.restored',
      'card.archived',
      'card.moved',
      'card.state_changed',
      'card.state_changed',
      'card.updated',
      'card.created',
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({ card_id: card.id, kind: 'activity', user_id: ann.id, content: null });
      expect(e.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    const ids = entries.map((e) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(entries[5].data).toMatchObject({ title: { from: 'tracked', to: 'renamed' } });
    expect(entries[4].data).toMatchObject({ from: 'undecided', to: 'in_progress' });
    expect(entries[3].data).toMatchObject({ from: 'in_progress', to: 'completed' });
    expect(entries[2].data).toMatchObject({ from_parent_id: top, to_parent_id: other.id });
  });

  it('records a reorder among siblings as a move', async () => {
    const parent = await c.create(ann, top, 'p');
    const a = await c.create(ann, parent.id, 'a');
    await c.create(ann, parent.id, 'b');
    await c.relocate(ann, a.id, { position: 1 });
    expect(actions(await c.stream(ann, a.id))).toEqual(['card.moved', 'card.created']);
  });

  it('says where the moved card ended: to_position, the requested position clamped to its siblings', async () => {
    const parent = await c.create(ann, top, 'p2');
    const other = await c.create(ann, top, 'other p2');
    const [a, , last] = [await c.create(ann, parent.id, 'a'), await c.create(ann, parent.id, 'b'), await c.create(ann, parent.id, 'c')];
    await c.create(ann, other.id, 'there');
    const moved = async (id: number) => (await c.stream(ann, id))[0];
    await c.relocate(ann, last.id, { position: 0 });
    expect(await moved(last.id)).toMatchObject({ action: 'card.moved', data: { from_parent_id: parent.id, to_parent_id: parent.id, from_position: 2, to_position: 0 } });
    // a is at 1 now; 99 is past the last sibling
    await c.relocate(ann, a.id, { position: 99 });
    expect((await moved(a.id)).data).toEqual({ from_parent_id: parent.id, to_parent_id: parent.id, from_position: 1, to_position: 2 });
    await c.relocate(ann, a.id, { parent_id: other.id, position: 7 });
    expect((await moved(a.id)).data).toEqual({ from_parent_id: parent.id, to_parent_id: other.id, from_position: 2, to_position: 1 });
    await c.relocate(ann, last.id, { parent_id: other.id, position: 0 });
    expect((await moved(last.id)).data).toEqual({ from_parent_id: parent.id, to_parent_id: other.id, from_position: 0, to_position: 0 });
  });

  it('records nothing when nothing changed', async () => {
    const card = await c.create(ann, top, 'same');
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ title: 'same', state: 'undecided' }).expect(200);
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).send({ state: 'nope' }).expect(400);
    await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send({ content: '' }).expect(400);
    expect(actions(await c.stream(ann, card.id))).toEqual(['card.created']);
  });

  it('records a deletion on the parent, which keeps the entry', async () => {
    const parent = await c.create(ann, top, 'parent');
    const doomed = await c.create(ann, parent.id, 'doomed');
    await c.create(ann, doomed.id, 'doomed child');
    await t.http.delete(`${API}/cards/${doomed.id}`).set(as(ann)).expect(200);
    const entries = await c.stream(ann, parent.id);
    expect(actions(entries)).toEqual(['card.deleted', 'card.created']);
    expect(entries[0]).toMatchObject({ kind: 'activity', card_id: parent.id, user_id: ann.id });
    expect(entries[0].data).toMatchObject({ card_id: doomed.id, title: 'doomed', subtree_size: 2 });
    await t.http.get(`${API}/cards/${doomed.id}/stream`).set(as(ann)).expect(404);
  });

  it('adds comments as entries of kind comment', async () => {
    const card = await c.create(ann, top, 'commented');
    const res = await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send({ content: 'Looks good' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      card_id: card.id,
      kind: 'comment',
      action: 'comment.added',
      user_id: ann.id,
      content: 'Looks good',
      data: {},
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const entries = await c.stream(ann, card.id);
    expect(entries[0]).toEqual(res.body);
    expect(actions(entries)).toEqual(['comment.added', 'card.created']);
  });

  it.each([
    ['empty content', { content: '' }],
    ['blank content', { content: '   ' }],
    ['no content', {}],
    ['a number', { content: 5 }],
    ['an unknown property', { content: 'x', mood: 'happy' }],
  ])('refuses a comment with %s (400, nothing recorded)', async (_label, body) => {
    const card = await c.create(ann, top, 'quiet');
    const res = await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send(body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(actions(await c.stream(ann, card.id))).toEqual(['card.created']);
  });

  it('pages the stream, newest first, with the X-Service-* headers', async () => {
    const card = await c.create(ann, top, 'chatty');
    for (let i = 0; i < 6; i++) {
      await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send({ content: `c${i}` }).expect(201);
    }
    // 7 entries: created + 6 comments.
    const p1 = await t.http.get(`${API}/cards/${card.id}/stream`).query({ per_page: 3 }).set(as(ann)).expect(200);
    expect(p1.body.map((e: StreamEntryJson) => e.content)).toEqual(['c5', 'c4', 'c3']);
    expect(p1.headers).toMatchObject({ 'x-service-page': '1', 'x-service-nextpage': '2', 'x-service-total': '7', 'x-service-totalpages': '3' });
    const p3 = await t.http.get(`${API}/cards/${card.id}/stream`).query({ per_page: 3, page: 3 }).set(as(ann)).expect(200);
    expect(p3.body.map((e: StreamEntryJson) => e.action)).toEqual(['card.created']);
    expect(p3.headers['x-service-nextpage']).toBeUndefined();
    await t.http.get(`${API}/cards/${card.id}/stream`).query({ per_page: 0 }).set(as(ann)).expect(400);
    await t.http.get(`${API}/cards/${card.id}/stream`).query({ per_page: 1001 }).set(as(ann)).expect(400);
    await t.http.get(`${API}/cards/${card.id}/stream`).query({ page: 'x' }).set(as(ann)).expect(400);
  });

  it('gives the top-level card its own stream', async () => {
    const entries = await c.stream(ann, top);
    expect(actions(entries)).toContain('card.created');
    expect(entries[entries.length - 1]).toMatchObject({ action: 'card.created', kind: 'activity', card_id: top });
  });
});

/**
 * DESIGN §9: no change without its stream entry. The recorder (or, for a
 * creation, which writes its entry itself, the stream's table) is made to
 * fail on demand; every change must then fail as a whole and leave no trace.
 */
describe('card stream atomicity', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson;
  let failing = false;
  let attempts = 0;

  const breakRecorder = (app: INestApplication) => {
    const recorder = app.get(CardStreamRecorder, { strict: false });
    const append = recorder.append.bind(recorder);
    recorder.append = async (entry) => {
      if (failing) {
        attempts++;
        throw new Error('stream storage is down');
      }
      return append(entry);
    };
  };

  beforeAll(async () => ({ t, c, ann, project } = await cardWorld({ team: 'Atomic', project: 'A', override: breakRecorder })));
  afterAll(() => t.close());

  async function whileFailing<T>(fn: () => Promise<T>): Promise<T> {
    failing = true;
    attempts = 0;
    try {
      return await fn();
    } finally {
      failing = false;
    }
  }

  /** Reads the card tables straight from the database, past the API. */
  async function dbCount(sql: string, params: unknown[]): Promise<number> {
    const rows = (await t.app.get(DataSource).query(sql, params)) as { n: string | number }[];
    return Number(rows[0].n);
  }

  it('rolls a creation back when its entry cannot be written', async () => {
    const top = project.top_level_card_id;
    const first = await c.create(ann, top, 'first');
    const before = await c.listing(ann, project.id, { with_archived: 'true' });
    const cardsBefore = await dbCount('SELECT count(*) AS n FROM cards.cards WHERE project_id = $1', [project.id]);

    // The creation writes its entry in its insert statement (writing along),
    // not through the recorder: the stream's table refuses the entry instead.
    const db = t.app.get(DataSource);
    await db.query(`CREATE FUNCTION cards.refuse_ghost() RETURNS trigger LANGUAGE plpgsql AS $$
                      BEGIN RAISE EXCEPTION 'stream storage is down'; END $$`);
    await db.query(`CREATE TRIGGER refuse_ghost BEFORE INSERT ON cards.card_stream
                      FOR EACH ROW WHEN (NEW.data->>'title' = 'ghost') EXECUTE FUNCTION cards.refuse_ghost()`);
    let res;
    try {
      res = await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).send({ title: 'ghost' });
    } finally {
      await db.query(`DROP TRIGGER refuse_ghost ON cards.card_stream`);
      await db.query(`DROP FUNCTION cards.refuse_ghost()`);
    }
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('stream storage is down');

    expect(await c.children(ann, top)).toEqual([await c.get(ann, first.id)]);
    const after = await c.listing(ann, project.id, { with_archived: 'true' });
    expect(after).toEqual(before);
    expect(await dbCount('SELECT count(*) AS n FROM cards.cards WHERE project_id = $1', [project.id])).toBe(cardsBefore);
    expect(await dbCount(`SELECT count(*) AS n FROM cards.cards WHERE title = 'ghost'`, [])).toBe(0);
    // The ref counter rolled back too: the next card takes the next ref, no gap.
    expect((await c.create(ann, top, 'second')).ref).toBe(first.ref + 1);
  });

  it('rolls an update, a state change, a move, an archive, a deletion and a comment back', async () => {
    const top = project.top_level_card_id;
    const card = await c.create(ann, top, 'stable');
    const other = await c.create(ann, top, 'elsewhere');
    await c.create(ann, card.id, 'stable child');
    const snapshot = async () => ({
      card: await c.get(ann, card.id),
      kids: await c.children(ann, card.id),
      topKids: await c.children(ann, top),
      listing: await c.listing(ann, project.id),
      all: await c.listing(ann, project.id, { with_archived: 'true' }),
      stream: await c.stream(ann, card.id),
      topStream: await c.stream(ann, top),
    });
    const before = await snapshot();
    const requests = [
      () => t.http.put(`${API}/cards/${card.id}`).send({ title: 'changed' }),
      () => t.http.put(`${API}/cards/${card.id}`).send({ state: 'closed' }),
      () => t.http.post(`${API}/cards/${card.id}/state`).send({ state: 'closed' }),
      () => t.http.post(`${API}/cards/${card.id}/relocate`).send({ parent_id: other.id }),
      () => t.http.post(`${API}/cards/${card.id}/relocate`).send({ position: 1 }),
      () => t.http.post(`${API}/cards/${card.id}/archive`),
      () => t.http.delete(`${API}/cards/${card.id}`),
      () => t.http.post(`${API}/cards/${card.id}/comments`).send({ content: 'lost' }),
    ];
    for (const request of requests) {
      const res = await whileFailing(() => request().set(as(ann)));
      expect(res.status).toBe(500);
      expect(attempts).toBeGreaterThan(0);
      expect(await snapshot()).toEqual(before);
    }
    expect((await c.get(ann, card.id)).title).toBe('stable');
  });

  it('rolls a project creation back with its top-level card', async () => {
    const org = project.organization_id;
    const before = (await t.http.get(`${API}/organizations/${org}/projects`).set(as(ann)).expect(200)).body;
    const res = await whileFailing(() => t.http.post(`${API}/organizations/${org}/projects`).set(as(ann)).send({ title: 'Ghost' }));
    expect(res.status).toBe(500);
    expect((await t.http.get(`${API}/organizations/${org}/projects`).set(as(ann)).expect(200)).body).toEqual(before);
    expect(await dbCount(`SELECT count(*) AS n FROM cards.cards WHERE title = 'Ghost'`, [])).toBe(0);
  });

  it('works again once the stream works again', async () => {
    const card = await c.create(ann, project.top_level_card_id, 'alive');
    expect((await c.stream(ann, card.id)).map((e) => e.action)).toEqual(['card.created']);
  });
});
