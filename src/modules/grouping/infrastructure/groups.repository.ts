import { Injectable } from '@nestjs/common';
import { Sql, toId } from '../../../shared/persistence/sql.js';
import type { Group } from '../domain/group.entity.js';
import { GROUP_COLUMNS, toGroup } from './rows.js';

export interface NewGroup {
  typeId: number;
  projectId: number;
  organizationId: number;
  cardId: number;
  title: string;
  position: number;
  createdBy: number | null;
}

/**
 * Groups and their order within (type, scope card). Group rows are always
 * locked in ascending id order, by every transaction, so no two lockers deadlock.
 */
@Injectable()
export class GroupsRepository {
  constructor(private readonly sql: Sql) {}

  async find(id: number): Promise<Group | null> {
    const [row] = await this.sql.rows(`SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE id = $1`, [id]);
    return row ? toGroup(row) : null;
  }

  /** The groups among `ids` that exist, in one query. */
  async findMany(ids: number[]): Promise<Group[]> {
    const unique = [...new Set(ids)];
    if (!unique.length) return [];
    const rows = await this.sql.rows(`SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE id = ANY($1::bigint[])`, [unique]);
    return rows.map(toGroup);
  }

  /** Locks the given groups (ascending id) and returns the ones that still exist. */
  async lockMany(ids: number[]): Promise<Group[]> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (!unique.length) return [];
    const rows = await this.sql.rows(
      `SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
      [unique],
    );
    return rows.map(toGroup);
  }

  /** Locks every group of a type scoped at a card (ascending id); returns them in position order. */
  async lockScope(typeId: number, cardId: number): Promise<Group[]> {
    const rows = await this.sql.rows(
      `SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE type_id = $1 AND card_id = $2 ORDER BY id FOR UPDATE`,
      [typeId, cardId],
    );
    return rows.map(toGroup).sort((a, b) => a.position - b.position);
  }

  /** Every group of a type scoped at a card, in position order, unlocked (the caller holds the type). */
  async ofScope(typeId: number, cardId: number): Promise<Group[]> {
    const rows = await this.sql.rows(
      `SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE type_id = $1 AND card_id = $2 ORDER BY position, id`,
      [typeId, cardId],
    );
    return rows.map(toGroup);
  }

  /**
   * New groups of one type and scope, last in their scope (positions from
   * `first` on, in the given order), in one statement: nothing else moves.
   */
  async insertLast(
    scope: Omit<NewGroup, 'title' | 'position'>,
    titles: string[],
    first: number,
  ): Promise<Group[]> {
    if (!titles.length) return [];
    const rows = await this.sql.rows(
      `INSERT INTO grouping.groups (type_id, project_id, organization_id, card_id, title, position, created_by)
       SELECT $1, $2, $3, $4, t.title, $5::int + t.n::int - 1, $6
         FROM unnest($7::text[]) WITH ORDINALITY AS t(title, n)
        ORDER BY t.n
       RETURNING ${GROUP_COLUMNS}`,
      [scope.typeId, scope.projectId, scope.organizationId, scope.cardId, first, scope.createdBy, titles],
    );
    return rows.map(toGroup).sort((a, b) => a.position - b.position);
  }

  async insert(g: NewGroup): Promise<Group> {
    await this.sql.run(
      `UPDATE grouping.groups SET position = position + 1 WHERE type_id = $1 AND card_id = $2 AND position >= $3`,
      [g.typeId, g.cardId, g.position],
    );
    const [row] = await this.sql.rows(
      `INSERT INTO grouping.groups (type_id, project_id, organization_id, card_id, title, position, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${GROUP_COLUMNS}`,
      [g.typeId, g.projectId, g.organizationId, g.cardId, g.title, g.position, g.createdBy],
    );
    return toGroup(row);
  }

  /**
   * A new title and/or another place among its scope's groups, in one
   * statement, so that no row is updated twice in the transaction: a second
   * update of a row would check its foreign keys again, FOR KEY SHARE on the
   * scope card, after the type and groups and out of the lock order.
   */
  async update(group: Group, changes: { title?: string; position?: number }): Promise<void> {
    const from = group.position;
    const to = changes.position ?? from;
    if (from === to && changes.title === undefined) return;
    await this.sql.run(
      `UPDATE grouping.groups
          SET position = CASE WHEN id = $3 THEN $5::int WHEN $5::int < $4::int THEN position + 1 ELSE position - 1 END,
              title = CASE WHEN id = $3 THEN coalesce($6::text, title) ELSE title END
        WHERE type_id = $1 AND card_id = $2 AND (id = $3 OR position BETWEEN least($4::int, $5::int) AND greatest($4::int, $5::int))`,
      [group.typeId, group.cardId, group.id, from, to, changes.title ?? null],
    );
  }

  /** Deletes the group (its memberships cascade) and closes the gap among its scope's groups. */
  async delete(group: Group): Promise<void> {
    await this.sql.run(`DELETE FROM grouping.groups WHERE id = $1`, [group.id]);
    await this.sql.run(
      `UPDATE grouping.groups SET position = position - 1 WHERE type_id = $1 AND card_id = $2 AND position > $3`,
      [group.typeId, group.cardId, group.position],
    );
  }

  /**
   * Groups scoped at any card of `scopeIds` (a card's chain, top-level first):
   * by type, then from the widest scope to the narrowest, then by position.
   */
  async scopedAt(scopeIds: number[], typeId?: number): Promise<Group[]> {
    const rows = await this.sql.rows(
      `SELECT ${GROUP_COLUMNS} FROM grouping.groups
        WHERE card_id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR type_id = $2)
        ORDER BY type_id, array_position($1::bigint[], card_id), position, id`,
      [scopeIds, typeId ?? null],
    );
    return rows.map(toGroup);
  }

  async findByTitle(typeId: number, cardId: number, title: string): Promise<Group | null> {
    const [row] = await this.sql.rows(
      `SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE type_id = $1 AND card_id = $2 AND lower(title) = lower($3)`,
      [typeId, cardId, title],
    );
    return row ? toGroup(row) : null;
  }

  /**
   * Locks (ascending id) every group a card deletion is about to touch: the
   * groups the subtree's cards are in, and the groups scoped at the subtree.
   * `subtreeIds` comes from card-hierarchy (CardHierarchyApi.subtreeIds), which
   * holds the subtree locked while it publishes CardDeleted, so the set cannot
   * change under us.
   */
  async lockForSubtreeDeletion(subtreeIds: number[]): Promise<void> {
    if (!subtreeIds.length) return;
    await this.sql.run(
      `SELECT g.id FROM grouping.groups g
        WHERE g.card_id = ANY($1::bigint[])
           OR g.id IN (SELECT m.group_id FROM grouping.memberships m WHERE m.card_id = ANY($1::bigint[]))
        ORDER BY g.id FOR UPDATE OF g`,
      [subtreeIds],
    );
  }

  /** Every group of a type, whatever its scope: by scope card, then position. */
  async ofType(typeId: number): Promise<Group[]> {
    const rows = await this.sql.rows(
      `SELECT ${GROUP_COLUMNS} FROM grouping.groups WHERE type_id = $1 ORDER BY card_id, position, id`,
      [typeId],
    );
    return rows.map(toGroup);
  }

  async idsOfType(typeId: number): Promise<number[]> {
    const rows = await this.sql.rows(`SELECT id FROM grouping.groups WHERE type_id = $1 ORDER BY id`, [typeId]);
    return rows.map((r) => toId(r.id));
  }
}
