import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data step before two links lose their second copy (issue 9; DDL in the next
 * two migrations): each link keeps the copy of its owner, filled from the
 * other copy wherever the owner's is missing.
 *  - a project's top-level card: workspace.projects.top_level_card_id
 *    (cards.project_counters.top_level_card_id goes);
 *  - a group type's field: fields.attributes.group_type_id
 *    (grouping.group_types.attribute_id goes).
 * Nothing to undo: the owners' copies were already right, or are now.
 */
export class LinksOneOwnerBackfill1763800000000 implements MigrationInterface {
  name = 'LinksOneOwnerBackfill1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE workspace.projects p SET top_level_card_id = c.top_level_card_id
        FROM cards.project_counters c
       WHERE c.project_id = p.id AND p.top_level_card_id IS DISTINCT FROM c.top_level_card_id`);
    await q.query(`
      UPDATE fields.attributes a SET group_type_id = t.id
        FROM grouping.group_types t
       WHERE t.attribute_id = a.id AND a.group_type_id IS DISTINCT FROM t.id`);
  }

  async down(): Promise<void> {
    // The data step changes no schema; the previous copies stay as they are.
  }
}
