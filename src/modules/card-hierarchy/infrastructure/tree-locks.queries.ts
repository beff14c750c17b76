import { Injectable } from '@nestjs/common';
import { Sql, toId, toIdOrNull, toIds } from '../../../shared/persistence/sql.js';
import type { TreeLockSet } from '../domain/tree-lock.policy.js';

/** What a lock reads of each card it took. */
export interface LockedCard {
  id: number;
  parentId: number | null;
  position: number;
  hidden: boolean;
  /** In the set's `subtreeOf` subtree. */
  inSubtree: boolean;
  /** Read for the cards the set names by id only; null for the others. */
  ancestorIds: number[] | null;
}

/** What one lock statement took. */
export interface LockedRows {
  cards: LockedCard[];
  /**
   * The highest id the statement may have locked: a row waited for that no
   * longer belongs to the set once its writer committed is left out of
   * `cards` but stays locked (PostgreSQL keeps the lock when its recheck
   * drops the row). Null when not known (no row came back).
   */
  ceiling: number | null;
}

interface RawLockedCard {
  id: number | string;
  ceiling: number | string | null;
  parent_id: number | string | null;
  position: number;
  hidden: boolean;
  in_subtree: boolean;
  ancestor_ids: (number | string)[] | string | null;
}

/** The set's cards as SQL over `c` (each part answered by its index: primary key, ancestors' GIN, children's). */
function setWhere(set: TreeLockSet, param: (value: unknown) => string): string {
  const parts = [`c.id = ANY(${param(set.ids)}::bigint[])`];
  if (set.subtreeOf !== undefined) parts.push(subtreeSql(param(set.subtreeOf)));
  for (const { parentId, from, to } of set.siblings) {
    const positions = to === null ? `>= ${param(from)}` : `BETWEEN ${param(from)} AND ${param(to)}`;
    parts.push(`(c.parent_id = ${param(parentId)} AND c.position ${positions})`);
  }
  return parts.join(' OR ');
}

function subtreeSql(rootParam: string): string {
  return `(c.id = ${rootParam}::bigint OR c.ancestor_ids @> ARRAY[${rootParam}::bigint])`;
}

function toLocked(r: RawLockedCard): LockedCard {
  return {
    id: toId(r.id),
    parentId: toIdOrNull(r.parent_id),
    position: Number(r.position),
    hidden: r.hidden,
    inSubtree: r.in_subtree,
    ancestorIds: r.ancestor_ids === null ? null : toIds(r.ancestor_ids),
  };
}

/**
 * SQL of the tree's step-1 locks (docs/card-tree.md, "Concurrency"): one
 * statement takes a whole set FOR UPDATE in ascending id, a plain read
 * tells whether the set is still what was locked.
 */
@Injectable()
export class TreeLockQueries {
  constructor(private readonly sql: Sql) {}

  /**
   * Locks the set's cards FOR UPDATE in ascending id, or, with `only`, just
   * those of them; `wait: false` fails at once (SQLSTATE 55P03) instead of
   * waiting for a card another transaction holds. Rows waited for are read
   * as that transaction left them, and left out when they no longer belong.
   */
  async lock(set: TreeLockSet, options: { only?: number[]; wait: boolean }): Promise<LockedRows> {
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const named = param(set.ids);
    const inSubtree = set.subtreeOf === undefined ? 'false' : subtreeSql(param(set.subtreeOf));
    const where = options.only ? `c.id = ANY(${param(options.only)}::bigint[])` : setWhere(set, param);
    // The candidates' highest id, read in the statement's own snapshot (an
    // InitPlan, run once): every row the scan below may lock is among them.
    // Its `c` hides the outer one, so `where` reads the same inside.
    const ceiling = options.only ? 'NULL' : `(SELECT max(c.id) FROM cards.cards c WHERE ${where})`;
    const rows = await this.sql.rows<RawLockedCard>(
      `SELECT c.id, c.parent_id, c.position, c.hidden, ${inSubtree} AS in_subtree,
              CASE WHEN c.id = ANY(${named}::bigint[]) THEN c.ancestor_ids END AS ancestor_ids,
              ${ceiling} AS ceiling
         FROM cards.cards c WHERE ${where}
        ORDER BY c.id FOR UPDATE OF c${options.wait ? '' : ' NOWAIT'}`,
      params,
    );
    // Locking by id alone, every row locked comes back (a deleted one is not locked).
    const top = options.only ? highest(options.only) : rows.length ? toId(rows[0].ceiling!) : null;
    return { cards: rows.map(toLocked), ceiling: top };
  }

  /** The ids of the set's cards now, without locking them. */
  async read(set: TreeLockSet): Promise<number[]> {
    const params: unknown[] = [];
    const rows = await this.sql.rows<{ id: number | string }>(
      `SELECT c.id FROM cards.cards c WHERE ${setWhere(set, (value) => `$${params.push(value)}`)}`,
      params,
    );
    return rows.map((r) => toId(r.id));
  }
}

/** Without spreading: a deletion may hold a parent's hundred thousand children. */
export function highest(ids: Iterable<number>): number {
  let max = -Infinity;
  for (const id of ids) max = Math.max(max, id);
  return max;
}
