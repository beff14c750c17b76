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
   * After a keyset position (`after`), a range scan of the partial listing
   * index from that id: the same cost at any depth. By offset, a deferred
   * join: the inner query skips `offset` entries of the index without
   * touching the table (an index-only scan while the visibility map is
   * current), and only the page's rows are read from the table; still
   * O(offset) index entries, but not O(offset) table rows.
   */
  async listPage(projectId: number, withArchived: boolean, limit: number, from: ListingStart): Promise<CardRow[]> {
    const sql = `SELECT ${CARD_COLUMNS} FROM cards.cards WHERE id IN (${listIdsSql(withArchived, from)}) ORDER BY id`;
    const rows = await this.sql.rows<RawCard>(sql, [projectId, limit, 'after' in from ? from.after : from.offset]);
    return rows.map(toRow);
  }

  async listIds(projectId: number, withArchived: boolean, limit: number, from: ListingStart): Promise<number[]> {
    const rows = await this.sql.rows<{ id: number }>(listIdsSql(withArchived, from), [
      projectId,
      limit,
      'after' in from ? from.after : from.offset,
    ]);
    return rows.map((r) => toId(r.id));
  }
}

/** Where a listing page starts: after a keyset position, or at an offset. */
export type ListingStart = { after: number } | { offset: number };

/** Ids of a listing page ($1 project, $2 limit, $3 the keyset id or the offset). */
function listIdsSql(withArchived: boolean, from: ListingStart): string {
  return `SELECT id FROM cards.cards
           WHERE project_id = $1 AND depth > 0 ${withArchived ? '' : 'AND NOT hidden'}
                 ${'after' in from ? 'AND id > $3 ORDER BY id LIMIT $2' : 'ORDER BY id LIMIT $2 OFFSET $3'}`;
}
