import { Injectable } from '@nestjs/common';
import { Sql, toId } from '../../../shared/persistence/sql.js';
import { CARD_COLUMNS, toRow, type CardRow, type RawCard } from './card-rows.js';

/**
 * Read-only queries that list cards (project listing, children, relationship
 * choices) and the listing totals; the tree's writes and locks are
 * CardTreeRepository's.
 */
@Injectable()
export class CardListingQueries {
  constructor(private readonly sql: Sql) {}

  /** Visible, non-top-level cards of a team other than `exceptCardId` (0: none), by project then ref. */
  async teamCards(organizationId: number, exceptCardId: number, limit: number): Promise<Array<{ id: number; title: string }>> {
    const rows = await this.sql.rows<{ id: number | string; title: string }>(
      `SELECT id, title FROM cards.cards
        WHERE organization_id = $1 AND id <> $2 AND depth > 0 AND NOT hidden
        ORDER BY project_id, ref LIMIT $3`,
      [organizationId, exceptCardId, limit],
    );
    return rows.map((r) => ({ id: toId(r.id), title: r.title }));
  }

  async children(parentId: number): Promise<CardRow[]> {
    const rows = await this.sql.rows<RawCard>(
      `SELECT ${CARD_COLUMNS} FROM cards.cards WHERE parent_id = $1 ORDER BY position, id`,
      [parentId],
    );
    return rows.map(toRow);
  }

  async counters(projectId: number): Promise<{ cardCount: number; visibleCount: number }> {
    const [row] = await this.sql.rows<{ card_count: number; visible_count: number }>(
      `SELECT card_count, visible_count FROM cards.project_counters WHERE project_id = $1`,
      [projectId],
    );
    return { cardCount: Number(row?.card_count ?? 0), visibleCount: Number(row?.visible_count ?? 0) };
  }

  /**
   * A page of the project listing, in id order (top-level card excluded).
   * Deferred join: the inner query skips `offset` entries of the partial
   * listing index without touching the table (an index-only scan while the
   * visibility map is current), and only the page's rows are read from the
   * table. Still O(offset) index entries, but not O(offset) table rows.
   */
  async listPage(projectId: number, withArchived: boolean, limit: number, offset: number): Promise<CardRow[]> {
    const rows = await this.sql.rows<RawCard>(
      `SELECT ${CARD_COLUMNS} FROM cards.cards
        WHERE id IN (SELECT id FROM cards.cards
                      WHERE project_id = $1 AND depth > 0 ${withArchived ? '' : 'AND NOT hidden'}
                      ORDER BY id LIMIT $2 OFFSET $3)
        ORDER BY id`,
      [projectId, limit, offset],
    );
    return rows.map(toRow);
  }

  async listIds(projectId: number, withArchived: boolean, limit: number, offset: number): Promise<number[]> {
    const rows = await this.sql.rows<{ id: number }>(
      `SELECT id FROM cards.cards
        WHERE project_id = $1 AND depth > 0 ${withArchived ? '' : 'AND NOT hidden'}
        ORDER BY id LIMIT $2 OFFSET $3`,
      [projectId, limit, offset],
    );
    return rows.map((r) => toId(r.id));
  }
}
