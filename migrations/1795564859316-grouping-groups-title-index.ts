import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The filter looks the groups a `#name` (or a group type field's value)
 * names up by title in the searched projects before it queries the cards
 * (GroupFilterSql.groupIds; docs/PERFORMANCE.md "Filters"). Groups had no
 * index by project: this one serves `project_id = ANY(…) AND lower(title) = …`
 * (and narrows `ILIKE` to the projects).
 */
export class GroupingGroupsTitleIndex1795564859316 implements MigrationInterface {
  name = 'GroupingGroupsTitleIndex1795564859316';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX groups_project_title_idx ON grouping.groups (project_id, lower(title))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS grouping.groups_project_title_idx`);
  }
}
