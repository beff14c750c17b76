import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A group's cards in id order from the index alone (docs/PERFORMANCE.md
 * "Filters"): the filter's `#Tag3` and a column's value test
 * `memberships.group_id`, and the only index that led with it,
 * `memberships_position_key (group_id, position)`, had to visit the rows for
 * their card ids. `(group_id, card_id)` answers the count by an index-only
 * scan and gives the page its cards already sorted.
 */
export class GroupingMembershipsGroupCardIndex1795600000100 implements MigrationInterface {
  name = 'GroupingMembershipsGroupCardIndex1795600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX memberships_group_card_idx ON grouping.memberships (group_id, card_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS grouping.memberships_group_card_idx`);
  }
}
