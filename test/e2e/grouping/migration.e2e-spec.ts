import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type QueryRunner } from 'typeorm';
import { GroupingInit1763769600400 } from '../../../migrations/1763769600400-grouping-init.js';
import { teamWorld } from '../../support/team-world.js';
import { type TestApp, type TestUser } from '../../support/test-app.js';
import { groupingClient, type ProjectJson } from './grouping-fixtures.js';

describe('grouping migration', () => {
  let t: TestApp, ann: TestUser, project: ProjectJson;
  beforeAll(async () => ({ t, ann, project } = await teamWorld({ project: 'Project' })));
  afterAll(() => t.close());

  const TABLES = ['grouping.group_types', 'grouping.groups', 'grouping.memberships'];

  it('goes down without a trace, with data in it, and comes back up', async () => {
    const c = groupingClient(t);
    const type = await c.type(ann, project.id, 'Status', true);
    const group = await c.group(ann, project.top_level_card_id, type.id, 'To do');
    await c.card(ann, project.top_level_card_id, 'card', { group_id: group.id });

    const db = t.app.get(DataSource);
    // The migration only runs SQL; the app's own connection does (the embedded database has one).
    const runner = { query: (sql: string, params?: unknown[]) => db.query(sql, params) } as unknown as QueryRunner;
    const present = async () => {
      const [row] = await db.query(
        `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'grouping')::int AS schemas,
                (SELECT count(*) FROM unnest($1::text[]) AS t(name) WHERE to_regclass(name) IS NOT NULL)::int AS tables,
                (to_regprocedure('grouping.close_membership_gaps()') IS NOT NULL) AS gap_trigger`,
        [TABLES],
      );
      return row;
    };
    const migration = new GroupingInit1763769600400();
    await migration.down(runner);
    expect(await present()).toEqual({ schemas: 0, tables: 0, gap_trigger: false });
    await migration.up(runner);
    expect(await present()).toEqual({ schemas: 1, tables: 3, gap_trigger: true });
    const [counts] = await db.query(
      `SELECT (SELECT count(*) FROM grouping.group_types)::int AS types, (SELECT count(*) FROM grouping.memberships)::int AS memberships`,
    );
    expect(counts).toEqual({ types: 0, memberships: 0 });
  });
});
