import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestKernel, type TestKernel } from '../../../../test/support/test-kernel.js';
import type { Sql } from '../../../shared/persistence/sql.js';
import type { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardListingQueries } from './card-listing.queries.js';

/**
 * The listing page's named statement is planned once per connection, not at
 * every call: PostgreSQL switches to its generic plan after five custom ones
 * only when that plan is about as cheap, which a LIMIT or OFFSET parameter
 * spoils (listIdsSql). Read back from the connection's `pg_prepared_statements`
 * inside one transaction; a project of 50 000 cards gives the planner
 * statistics under which the old text kept planning at every call.
 */
describe('the listing page statement', () => {
  let k: TestKernel;
  let uow: UnitOfWork;
  let sql: Sql;
  let listing: CardListingQueries;
  const onServer = process.env.DATABASE_URL !== undefined;
  const project = 9_000_001;

  beforeAll(async () => {
    k = await createTestKernel([CardListingQueries]);
    ({ uow, sql } = k);
    listing = k.module.get(CardListingQueries);
    const [top] = await sql.rows<{ id: string }>(
      `INSERT INTO cards.cards (project_id, organization_id, ref, title, position, depth) VALUES ($1, 1, 0, 'top', 0, 0) RETURNING id`,
      [project],
    );
    await sql.run(
      `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, ref, title, position, depth)
       SELECT $1, 1, $2, ARRAY[$2::bigint], g, 'card ' || g, g - 1, 1 FROM generate_series(1, 50000) g`,
      [project, top.id],
    );
    await sql.run(`INSERT INTO cards.project_counters (project_id, next_ref, card_count, visible_count) VALUES ($1, 50001, 50001, 50000)`, [project]);
    await sql.run(`ANALYZE cards.cards`);
  }, 60_000);
  afterAll(() => k.close());

  const page = (perPage: number, from: { offset: number } | { after: number }) =>
    listing.listPage(project, { withArchived: false, onlyIds: false, limit: perPage + 1, from });

  it('uses its generic plan from the sixth call on, for a first page and a page by cursor, with the same rows', async () => {
    const { firsts, cursors, statements } = await uow.run(async () => {
      const firsts = [];
      const cursors = [];
      for (let i = 0; i < 8; i++) firsts.push((await page(100, { offset: 0 }))!.ids);
      for (let i = 0; i < 8; i++) cursors.push((await page(100, { after: firsts[0][99] }))!.ids);
      const statements = await sql.rows<{ statement: string; generic_plans: number; custom_plans: number }>(
        `SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement LIKE '%project_counters pc%'`,
      );
      return { firsts, cursors, statements };
    });
    expect(firsts[0]).toHaveLength(101);
    expect(new Set(firsts.map((ids) => ids.join()))).toEqual(new Set([firsts[0].join()]));
    expect(cursors[0][0]).toBeGreaterThan(firsts[0][99]);
    expect(new Set(cursors.map((ids) => ids.join()))).toEqual(new Set([cursors[0].join()]));
    if (!onServer) return expect(statements).toEqual([]); // the embedded database sends everything unnamed
    expect(statements).toHaveLength(2);
    for (const s of statements) expect(s).toMatchObject({ custom_plans: 5, generic_plans: 3 });
  });

  it('names the usual page sizes only: any other per_page is sent unnamed, so it cannot use up the names', async () => {
    const statements = await uow.run(async () => {
      await page(37, { offset: 0 });
      await page(50, { offset: 0 });
      return sql.rows<{ statement: string }>(`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%project_counters pc%'`);
    });
    // The connection may hold the first test's statements too (LIMIT 101).
    const limits = statements.map((s) => /LIMIT (\d+)/.exec(s.statement)?.[1]).filter((l) => l !== '101');
    expect(limits).toEqual(onServer ? ['51'] : []);
  });

  it('plans the cards-by-id statement once for a page of one card too, with the same row and reads every time', async () => {
    const [card] = await sql.rows<{ id: string }>(`SELECT id FROM cards.cards WHERE project_id = $1 AND ref = 777`, [project]);
    const id = Number(card.id);
    // Reads along over the ids, as other modules' (values, memberships) are.
    const extras = { seen: '(SELECT count(*)::int FROM cards.cards x WHERE x.id = ANY($1::bigint[]))' };
    const { results, statements } = await uow.run(async () => {
      const results = [];
      for (let i = 0; i < 8; i++) results.push(await listing.jsonRows([id], extras));
      const statements = await sql.rows<{ generic_plans: number; custom_plans: number }>(
        `SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement LIKE '%x.id = ANY($1::bigint[])%'`,
      );
      return { results, statements };
    });
    for (const r of results) {
      expect(r.rows.map((row) => row.id)).toEqual([id]);
      expect(r.extras).toEqual({ seen: 1 });
    }
    if (!onServer) return expect(statements).toEqual([]);
    // Unpadded, a one-id array kept every call on a custom plan: 8 custom, 0 generic.
    expect(statements).toEqual([{ custom_plans: 5, generic_plans: 3 }]);
  });
});
