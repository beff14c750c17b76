import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { ancestry, API, cardWorld, expectConsistentTree, type CardClient, type CardJson } from './card-fixtures.js';
import { itOnPostgres } from '../../support/on-postgres.js';

/**
 * Races on the card tree. Meaningful on real PostgreSQL (DATABASE_URL); on the
 * embedded database transactions are serialized, so the same tests check that
 * the serial outcome is right.
 */
describe('card tree under concurrency', () => {
  let t: TestApp, ann: TestUser, c: CardClient, org: number;

  beforeAll(async () => {
    ({ t, c, ann, team: org } = await cardWorld({ team: 'Races', env: { RATE_LIMIT_PER_MINUTE: '1000000' } }));
    // A listening server, so parallel supertest requests share it instead of
    // each starting (and closing) its own listener.
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(() => t.close());

  const post = (path: string, body: object = {}) => t.http.post(`${API}${path}`).set(as(ann)).send(body);
  const statuses = (rs: Response[]) => rs.map((r) => r.status).sort((a, b) => a - b);

  it('gives 30 parallel creations under one parent unique, contiguous refs and positions 0..29', async () => {
    const p = await c.project(ann, org, 'Refs');
    const first = await c.create(ann, p.top_level_card_id, 'first');
    const parent = await c.create(ann, p.top_level_card_id, 'parent');
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => post(`/cards/${parent.id}/children`, { title: `c${i}` })));
    expect(statuses(results)).toEqual(Array(30).fill(201));
    const cards = results.map((r) => r.body as CardJson);
    const refs = cards.map((x) => x.ref).sort((a, b) => a - b);
    expect(refs).toEqual(Array.from({ length: 30 }, (_, i) => first.ref + 2 + i));
    expect(cards.map((x) => x.position).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const listed = await c.expectDense(ann, parent.id);
    expect(listed).toHaveLength(30);
    // What each request answered is what is stored.
    for (const card of cards) expect(listed[card.position].id).toBe(card.id);
    expect((await c.listing(ann, p.id)).total).toBe(32);
    expect((await c.create(ann, parent.id, 'after')).ref).toBe(first.ref + 32);
  });

  it('keeps refs unique when creations race under many parents of one project', async () => {
    const p = await c.project(ann, org, 'Many parents');
    const parents: CardJson[] = [];
    for (let i = 0; i < 5; i++) parents.push(await c.create(ann, p.top_level_card_id, `p${i}`));
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(`/cards/${parents[i % 5].id}/children`, { title: `c${i}` })),
    );
    expect(statuses(results)).toEqual(Array(40).fill(201));
    const refs = results.map((r) => (r.body as CardJson).ref).sort((a, b) => a - b);
    expect(refs).toEqual(Array.from({ length: 40 }, (_, i) => 6 + i));
    await expectConsistentTree(t, ann, p);
  });

  it('never makes a cycle when A moves under B while B moves under A', async () => {
    const p = await c.project(ann, org, 'Swap');
    for (let round = 0; round < 8; round++) {
      const a = await c.create(ann, p.top_level_card_id, `a${round}`);
      const b = await c.create(ann, p.top_level_card_id, `b${round}`);
      const a1 = await c.create(ann, a.id, `a${round}.1`);
      const b1 = await c.create(ann, b.id, `b${round}.1`);
      // Alternate direct and deep targets: under B, or under B's child.
      const [toB, toA] = round % 2 ? [b1.id, a1.id] : [b.id, a.id];
      const results = await Promise.all([post(`/cards/${a.id}/relocate`, { parent_id: toB }), post(`/cards/${b.id}/relocate`, { parent_id: toA })]);
      expect(statuses(results)).toEqual([200, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expect(loser.body.type).toBe('CARD.CYCLE_DETECTED');
      for (const id of [a.id, b.id, a1.id, b1.id]) {
        const chain = await ancestry(t, ann, id);
        expect(chain[chain.length - 1]).toBe(p.top_level_card_id);
      }
    }
    await expectConsistentTree(t, ann, p);
  });

  it('never makes a cycle when a ring of cards each move under the next', async () => {
    const p = await c.project(ann, org, 'Ring');
    for (let round = 0; round < 4; round++) {
      const ring: CardJson[] = [];
      for (let i = 0; i < 6; i++) ring.push(await c.create(ann, p.top_level_card_id, `r${round}.${i}`));
      const results = await Promise.all(ring.map((x, i) => post(`/cards/${x.id}/relocate`, { parent_id: ring[(i + 1) % ring.length].id })));
      for (const r of results) expect([200, 409]).toContain(r.status);
      expect(results.filter((r) => r.status === 409).length).toBeGreaterThanOrEqual(1);
      // Exactly the moves that answered 200 happened.
      for (const [i, x] of ring.entries()) {
        const now = await c.get(ann, x.id);
        const moved = results[i].status === 200;
        expect(now.parent_id).toBe(moved ? ring[(i + 1) % ring.length].id : p.top_level_card_id);
        const chain = await ancestry(t, ann, x.id);
        expect(chain[chain.length - 1]).toBe(p.top_level_card_id);
      }
    }
    await expectConsistentTree(t, ann, p);
  });

  it('never makes a cycle when chains of cards cross-move', async () => {
    // top ─ x1 ─ x2 ─ x3 and top ─ y1 ─ y2 ─ y3; x1 → under y3 while y1 → under x3, and the reverse mix.
    const p = await c.project(ann, org, 'Chains');
    for (let round = 0; round < 6; round++) {
      const x1 = await c.create(ann, p.top_level_card_id, 'x1');
      const x2 = await c.create(ann, x1.id, 'x2');
      const x3 = await c.create(ann, x2.id, 'x3');
      const y1 = await c.create(ann, p.top_level_card_id, 'y1');
      const y2 = await c.create(ann, y1.id, 'y2');
      const y3 = await c.create(ann, y2.id, 'y3');
      const moves =
        round % 2
          ? [post(`/cards/${x1.id}/relocate`, { parent_id: y3.id }), post(`/cards/${y1.id}/relocate`, { parent_id: x3.id })]
          : [
              post(`/cards/${x2.id}/relocate`, { parent_id: y3.id }),
              post(`/cards/${y2.id}/relocate`, { parent_id: x3.id }),
              post(`/cards/${x1.id}/relocate`, { parent_id: y2.id }),
            ];
      const results = await Promise.all(moves);
      for (const r of results) expect([200, 409]).toContain(r.status);
      expect(results.some((r) => r.status === 409)).toBe(true);
      for (const card of [x1, x2, x3, y1, y2, y3]) {
        const chain = await ancestry(t, ann, card.id);
        expect(chain[chain.length - 1]).toBe(p.top_level_card_id);
      }
    }
    await expectConsistentTree(t, ann, p);
  });

  it('keeps positions dense and unique when many cards move into one parent at once', async () => {
    const p = await c.project(ann, org, 'Converge');
    const target = await c.create(ann, p.top_level_card_id, 'target');
    for (let i = 0; i < 3; i++) await c.create(ann, target.id, `resident${i}`);
    const sources: CardJson[] = [];
    for (let i = 0; i < 4; i++) sources.push(await c.create(ann, p.top_level_card_id, `source${i}`));
    const movers: CardJson[] = [];
    for (let i = 0; i < 20; i++) movers.push(await c.create(ann, sources[i % 4].id, `m${i}`));
    const results = await Promise.all(
      movers.map((m, i) => post(`/cards/${m.id}/relocate`, i % 3 === 0 ? { parent_id: target.id } : { parent_id: target.id, position: i % 5 })),
    );
    expect(statuses(results)).toEqual(Array(20).fill(200));
    const kids = await c.expectDense(ann, target.id);
    expect(kids).toHaveLength(23);
    for (const s of sources) await c.expectDense(ann, s.id);
    expect(await c.children(ann, sources[0].id)).toEqual([]);
    await expectConsistentTree(t, ann, p);
  });

  it('keeps positions dense when siblings are reordered, created and deleted at once', async () => {
    const p = await c.project(ann, org, 'Shuffle');
    const parent = await c.create(ann, p.top_level_card_id, 'parent');
    const kids: CardJson[] = [];
    for (let i = 0; i < 12; i++) kids.push(await c.create(ann, parent.id, `k${i}`));
    const results = await Promise.all([
      ...kids.slice(0, 6).map((k, i) => post(`/cards/${k.id}/relocate`, { position: (i * 5) % 12 })),
      ...kids.slice(6, 9).map((k) => t.http.delete(`${API}/cards/${k.id}`).set(as(ann))),
      ...Array.from({ length: 5 }, (_, i) => post(`/cards/${parent.id}/children`, { title: `new${i}` })),
    ]);
    for (const r of results) expect([200, 201]).toContain(r.status);
    expect(await c.expectDense(ann, parent.id)).toHaveLength(12 - 3 + 5);
    await expectConsistentTree(t, ann, p);
  });

  it('gives cards created under a moving subtree the new ancestry', async () => {
    const p = await c.project(ann, org, 'Moving subtree');
    const top = p.top_level_card_id;
    const left = await c.create(ann, top, 'left');
    const right = await c.create(ann, await c.create(ann, top, 'right0').then((r) => r.id), 'right');
    const branch = await c.create(ann, left.id, 'branch');
    const chain: CardJson[] = [branch];
    for (let i = 0; i < 3; i++) chain.push(await c.create(ann, chain[chain.length - 1].id, `deep${i}`));
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all([
        ...chain.slice(1).flatMap((x, i) => [
          post(`/cards/${x.id}/children`, { title: `leaf${round}.${i}a` }),
          post(`/cards/${x.id}/children`, { title: `leaf${round}.${i}b` }),
        ]),
        post(`/cards/${branch.id}/relocate`, { parent_id: round % 2 ? left.id : right.id }),
      ]);
      for (const r of results) expect([200, 201]).toContain(r.status);
    }
    await expectConsistentTree(t, ann, p);
  });

  it('keeps depths, archive flags and totals right when subtrees move, archive and grow at once', async () => {
    const p = await c.project(ann, org, 'Storm');
    const top = p.top_level_card_id;
    const left = await c.create(ann, top, 'left');
    const right = await c.create(ann, top, 'right');
    const branch = await c.create(ann, left.id, 'branch');
    const chain: CardJson[] = [branch];
    for (let i = 0; i < 4; i++) chain.push(await c.create(ann, chain[chain.length - 1].id, `deep${i}`));
    const bystander = await c.create(ann, right.id, 'bystander');

    for (let round = 0; round < 6; round++) {
      const to = round % 2 ? left.id : right.id;
      const results = await Promise.all([
        post(`/cards/${branch.id}/relocate`, { parent_id: to }),
        round % 3 === 1 ? post(`/cards/${branch.id}/archive`) : t.http.delete(`${API}/cards/${branch.id}/archive`).set(as(ann)),
        ...chain.slice(1).map((x, i) => post(`/cards/${x.id}/children`, { title: `leaf${round}.${i}` })),
        post(`/cards/${bystander.id}/children`, { title: `b${round}` }),
      ]);
      for (const r of results) expect([200, 201]).toContain(r.status);
      await expectConsistentTree(t, ann, p);
    }
  });

  it('answers 404, never 500, when a parent is deleted while children are added', async () => {
    const p = await c.project(ann, org, 'Vanishing');
    for (let round = 0; round < 5; round++) {
      const doomed = await c.create(ann, p.top_level_card_id, 'doomed');
      const inner = await c.create(ann, doomed.id, 'inner');
      const results = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => post(`/cards/${(i % 2 ? inner : doomed).id}/children`, { title: `c${i}` })),
        t.http.delete(`${API}/cards/${doomed.id}`).set(as(ann)),
        post(`/cards/${inner.id}/comments`, { content: 'racing' }),
        t.http.put(`${API}/cards/${inner.id}`).set(as(ann)).send({ title: 'renamed' }),
        post(`/cards/${inner.id}/archive`),
        post(`/cards/${inner.id}/relocate`, { position: 0 }),
      ]);
      for (const r of results) expect([200, 201, 404]).toContain(r.status);
      await t.http.get(`${API}/cards/${doomed.id}`).set(as(ann)).expect(404);
      await expectConsistentTree(t, ann, p);
    }
  });

  // Every write takes its row locks in one order (tree rows by id, then the
  // project counters, then other modules' rows), so none of the races above
  // should have needed a deadlock and a retry. PostgreSQL counts them.
  itOnPostgres('moves a card without locking the new parent\'s ancestors, so moves in other branches do not queue on them', async () => {
    const p = await c.project(ann, org, 'Branches');
    const left = await c.create(ann, p.top_level_card_id, 'left');
    const right = await c.create(ann, p.top_level_card_id, 'right');
    const deep = await c.create(ann, right.id, 'deep');
    const mover = await c.create(ann, left.id, 'mover');
    const sibling = await c.create(ann, left.id, 'sibling');
    // A third transaction holds the top-level card and "right" as a child's
    // foreign key does (a creation under them, a value naming them): KEY SHARE.
    const holder = t.app.get(DataSource).createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    let released: Promise<void> | undefined;
    const release = () => (released ??= holder.rollbackTransaction());
    // Let go after 3 s whatever happens, so a move that waits still ends (and fails the timing below).
    const timer = setTimeout(() => void release(), 3000);
    try {
      await holder.query('SELECT id FROM cards.cards WHERE id = ANY($1::bigint[]) FOR KEY SHARE', [[p.top_level_card_id, right.id]]);
      const started = Date.now();
      // Under another parent (deep, under right, under the top-level card), then among its siblings.
      const moved = await post(`/cards/${mover.id}/relocate`, { parent_id: deep.id, position: 0 });
      const reordered = await post(`/cards/${sibling.id}/relocate`, { position: 0 });
      expect([moved.status, reordered.status]).toEqual([200, 200]);
      // Neither waited for the held ancestors (they locked them FOR UPDATE before, and waited).
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      clearTimeout(timer);
      await release();
      await holder.release();
    }
    expect(await ancestry(t, ann, mover.id)).toEqual([mover.id, deep.id, right.id, p.top_level_card_id]);
    await expectConsistentTree(t, ann, p);
  });

  itOnPostgres('needed no deadlock along the way', async () => {
    const [row] = await t.app.get(DataSource).query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`);
    expect(Number(row.deadlocks)).toBe(0);
  });
});
