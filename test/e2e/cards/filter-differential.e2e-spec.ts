/**
 * Differential test of the filter language: for random worlds and random
 * filters, the SQL compiled from each module's parts must select exactly the
 * cards that the reference evaluator (written from docs/FILTERS.md) selects,
 * page and total, and refuse the same filters at the same position.
 *
 * Seeded: FILTER_SEED=<n> replays a run; a failure prints the seed, the
 * filter and the difference. FILTER_WORLDS / FILTER_CASES scale it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { FILTER_PLAN_LIMITS } from '../../../src/modules/card-hierarchy/infrastructure/card-filter.sql.js';
import { CardFilterService } from '../../../src/modules/cards/filter/card-filter.service.js';
import { FilterError } from '../../../src/modules/cards/filter/filter.errors.js';
import { parseFilter } from '../../../src/modules/cards/filter/filter.parser.js';
import { mentionsArchived, resolveFilter, userMap, userRefs } from '../../../src/modules/cards/filter/filter.resolver.js';
import { ReferenceEvaluator, type World, type WorldUser } from '../../../src/modules/cards/filter/reference-evaluator.test-support.js';
import { withPlanLimits } from '../../support/plan-limits.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { generateFilter, generateWorld, insertWorld, TODAY } from './filter-world.js';

const SEED = Number(process.env.FILTER_SEED ?? Date.now() % 1_000_000);
const WORLDS = Number(process.env.FILTER_WORLDS ?? 30);
const CASES_PER_WORLD = Number(process.env.FILTER_CASES ?? 100);

type Outcome = { ids: number[]; total: number } | { error: number };

/**
 * The plan limits each case runs under (FILTER_PLAN_LIMITS), so that every
 * plan of a filter over several projects meets the random filters: the
 * sorted candidates, each candidate looked up, each project walked, and
 * limits the small worlds' sets cross. With the defaults alone, a set of
 * candidates was never walked.
 */
const PLAN_LIMITS: Array<typeof FILTER_PLAN_LIMITS> = [
  { ...FILTER_PLAN_LIMITS },
  { sortedCandidates: FILTER_PLAN_LIMITS.sortedCandidates, fewCandidates: 0 },
  { sortedCandidates: 0, fewCandidates: 0 },
  { sortedCandidates: 4, fewCandidates: 2 },
];

function expected(world: World, projectIds: number[], me: number, text: string, withArchived: boolean, limit: number, offset: number): Outcome {
  try {
    const expr = parseFilter(text);
    const refs = userRefs(expr);
    const condition = resolveFilter(expr, {
      schema: { fields: world.fields.filter((f) => projectIds.includes(f.projectId)), models: world.models },
      meId: me,
      today: TODAY,
      users: userMap(refs, world.users),
    });
    const all = new ReferenceEvaluator(world).select(condition, projectIds, withArchived || mentionsArchived(expr));
    return { ids: all.slice(offset, offset + limit), total: all.length };
  } catch (e) {
    if (e instanceof FilterError) return { error: e.position };
    throw e;
  }
}

describe('filter: SQL against the reference evaluator', () => {
  let t: TestApp;
  let users: WorldUser[];

  beforeAll(async () => {
    t = await createTestApp();
    const names: Array<[string, string]> = [
      ['ann', 'Ann Lee'],
      ['bob', 'Bob Stone'],
      ['cat', 'Dan'],
      ['dan', 'cat'],
    ];
    users = [];
    for (const [username, displayName] of names) {
      const u = await t.user(username);
      await t.app.get(DataSource).query(`UPDATE identity.users SET display_name = $2 WHERE id = $1`, [u.id, displayName]);
      users.push({ id: u.id, username, displayName });
    }
  });

  afterAll(() => t.close());

  it(`selects the same cards over ${WORLDS} random worlds × ${CASES_PER_WORLD} random filters (seed ${SEED})`, async () => {
    const service = t.app.get(CardFilterService);
    const ds = t.app.get(DataSource);
    let world = 0;
    let cases = 0;
    const seen = { refused: 0, empty: 0, some: 0, everything: 0 };
    const result = await fc.check(
      fc.asyncProperty(fc.gen(), async (g) => {
        const base = ++world * 1_000_000;
        const gw = generateWorld(g, base, users);
        await insertWorld(ds, gw, users[0].id);
        for (let i = 0; i < CASES_PER_WORLD; i++) {
          const text = generateFilter(g);
          const me = g(fc.constantFrom, ...users);
          const withArchived = g(fc.boolean);
          const [limit, offset] = g(fc.constantFrom, [1000, 0], [1000, 0], [3, 0], [2, 3], [5, 100]);
          const limits = g(fc.constantFrom, ...PLAN_LIMITS);
          const want = expected(gw.world, gw.projectIds, me.id, text, withArchived, limit, offset);
          let got: Outcome;
          try {
            got = await withPlanLimits(limits, () =>
              service.run(
                { text, parameter: 'filter', projectIds: gw.projectIds, withArchived, limit, from: { offset }, today: TODAY },
                { userId: me.id, username: me.username, isAdmin: false, scopes: null },
              ),
            );
          } catch (e) {
            if (!(e instanceof FilterError)) throw e;
            got = { error: e.position };
          }
          cases++;
          if ('error' in want) seen.refused++;
          else if (want.total === 0) seen.empty++;
          else if (want.total === gw.world.cards.filter((c) => c.depth > 0 && (withArchived || !c.hidden)).length) seen.everything++;
          else seen.some++;
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            throw new Error(
              `seed ${SEED}, world ${world} (projects ${gw.projectIds.join(', ')}), filter ${JSON.stringify(text)}` +
                ` as @${me.username}, with_archived=${withArchived}, limit ${limit} offset ${offset}, plan limits ${JSON.stringify(limits)}:\n` +
                `  SQL       ${JSON.stringify(got)}\n  reference ${JSON.stringify(want)}`,
            );
          }
        }
      }),
      { seed: SEED, numRuns: WORLDS, endOnFailure: true },
    );
    // The failing filter says more than fast-check's generator trace.
    if (result.failed) throw result.errorInstance;
    process.stderr.write(`filter differential: ${cases} cases, ${JSON.stringify(seen)}\n`);
    expect(cases).toBe(WORLDS * CASES_PER_WORLD);
    // The generator must exercise all outcomes, not mostly errors or empty pages.
    expect(seen.some).toBeGreaterThan(cases / 4);
    expect(seen.refused).toBeGreaterThan(cases / 20);
    expect(seen.refused).toBeLessThan(cases / 2);
  }, 300_000);
});
