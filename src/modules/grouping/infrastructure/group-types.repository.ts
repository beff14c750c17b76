import { Injectable } from '@nestjs/common';
import { Sql } from '../../../shared/persistence/sql.js';
import type { GroupType } from '../domain/group-type.entity.js';
import { GROUP_TYPE_COLUMNS, toGroupType } from './rows.js';

export interface NewGroupType {
  projectId: number;
  organizationId: number;
  name: string;
  oneGroupPerCard: boolean;
  createdBy: number | null;
}

/**
 * Lock modes on a type row: changes to the type or to its groups' order take
 * FOR NO KEY UPDATE; membership changes take FOR SHARE, so they see a settled
 * `one_group_per_card` and never wait on each other. Neither conflicts with
 * the key-share locks that foreign keys take.
 */
@Injectable()
export class GroupTypesRepository {
  constructor(private readonly sql: Sql) {}

  async insert(t: NewGroupType): Promise<GroupType> {
    const [row] = await this.sql.rows(
      `INSERT INTO grouping.group_types (project_id, organization_id, name, one_group_per_card, created_by)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${GROUP_TYPE_COLUMNS}`,
      [t.projectId, t.organizationId, t.name, t.oneGroupPerCard, t.createdBy],
    );
    return toGroupType(row);
  }

  async find(id: number): Promise<GroupType | null> {
    const [row] = await this.sql.rows(`SELECT ${GROUP_TYPE_COLUMNS} FROM grouping.group_types WHERE id = $1`, [id]);
    return row ? toGroupType(row) : null;
  }

  async findByName(projectId: number, name: string): Promise<GroupType | null> {
    const [row] = await this.sql.rows(
      `SELECT ${GROUP_TYPE_COLUMNS} FROM grouping.group_types WHERE project_id = $1 AND lower(name) = lower($2)`,
      [projectId, name],
    );
    return row ? toGroupType(row) : null;
  }

  async lock(id: number, mode: 'update' | 'share'): Promise<GroupType | null> {
    const [row] = await this.sql.rows(
      `SELECT ${GROUP_TYPE_COLUMNS} FROM grouping.group_types WHERE id = $1 FOR ${mode === 'update' ? 'NO KEY UPDATE' : 'SHARE'}`,
      [id],
    );
    return row ? toGroupType(row) : null;
  }

  /**
   * FOR SHARE, ascending id, on the types of the groups scoped at `cardIds`
   * and of the cards' memberships; returns how many there were.
   */
  async lockUsedBy(cardIds: number[]): Promise<number> {
    const rows = await this.sql.rows(
      `SELECT t.id FROM grouping.group_types t
        WHERE t.id IN (SELECT g.type_id FROM grouping.groups g WHERE g.card_id = ANY($1::bigint[])
                       UNION SELECT m.type_id FROM grouping.memberships m WHERE m.card_id = ANY($1::bigint[]))
        ORDER BY t.id FOR SHARE OF t`,
      [cardIds],
    );
    return rows.length;
  }

  async ofProject(projectId: number): Promise<GroupType[]> {
    const rows = await this.sql.rows(
      `SELECT ${GROUP_TYPE_COLUMNS} FROM grouping.group_types WHERE project_id = $1 ORDER BY id`,
      [projectId],
    );
    return rows.map(toGroupType);
  }

  async update(id: number, changes: { name?: string; oneGroupPerCard?: boolean }): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (changes.name !== undefined) sets.push(`name = $${params.push(changes.name)}`);
    if (changes.oneGroupPerCard !== undefined) sets.push(`one_group_per_card = $${params.push(changes.oneGroupPerCard)}`);
    if (!sets.length) return;
    await this.sql.run(`UPDATE grouping.group_types SET ${sets.join(', ')} WHERE id = $1`, params);
  }

  /** Whether some card is in two or more groups of the type. */
  async hasCardInSeveralGroups(typeId: number): Promise<boolean> {
    const rows = await this.sql.rows(
      `SELECT 1 FROM grouping.memberships WHERE type_id = $1 GROUP BY card_id HAVING count(*) > 1 LIMIT 1`,
      [typeId],
    );
    return rows.length > 0;
  }

  /** Its groups and their memberships go through ON DELETE CASCADE. */
  async delete(id: number): Promise<void> {
    await this.sql.run(`DELETE FROM grouping.group_types WHERE id = $1`, [id]);
  }

  async deleteProject(projectId: number): Promise<void> {
    await this.sql.run(`DELETE FROM grouping.group_types WHERE project_id = $1`, [projectId]);
  }
}
