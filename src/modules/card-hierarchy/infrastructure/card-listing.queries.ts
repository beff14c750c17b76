import { Injectable } from '@nestjs/common';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import type { ListingStart } from '../../../shared/http/cursor.js';
import { Sql, toId, toIds } from '../../../shared/persistence/sql.js';
import type { CardJsonRow, ChildrenOf, ListedCardsReads } from '../contracts/card-hierarchy.api.js';
import { cardJsonColumns, extraColumnsSql, extrasRead, toJsonRow, type RawCardJson } from './card-rows.js';

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

  /**
   * The first `limit` children in position order (archived ones, and those
   * under an archived card, only `withArchived`), with other modules' reads
   * (`extras` over the row `c`, and `ofListed` over those children's ids) on
   * the first row; and the ids of the children after them (`rest`), read in
   * the same statement, so from the same snapshot.
   */
  async children(
    parentId: number,
    withArchived: boolean,
    limit: number,
    extras: Record<string, string> = {},
    ofListed?: ListedCardsReads,
  ): Promise<{ rows: CardJsonRow[]; extras: Record<string, unknown>; rest: number[] }> {
    const where = (alias: string) => childrenWhere(alias, '$1', withArchived);
    const reads = { ...withOfListed(extras, ofListed), [REST]: `ARRAY(SELECT r.id FROM cards.cards r WHERE ${where('r')} ORDER BY r.position, r.id OFFSET $2)` };
    if (limit === 0) {
      // No row to read the others along with: their ids alone.
      const [row] = await this.sql.rows<{ rest: unknown }>(prepared(`SELECT ${reads[REST]} AS rest`), [parentId, 0]);
      return { rows: [], extras: {}, rest: toIds(row.rest) };
    }
    const listed = `SELECT ${cardJsonColumns('c')}, c.position FROM cards.cards c WHERE ${where('c')} ORDER BY c.position, c.id LIMIT $2`;
    const rows = await this.sql.rows<RawCardJson & Record<string, unknown>>(prepared(withListedReads(listed, 'c.position, c.id', reads)), [parentId, limit]);
    if (!rows.length) return { rows: [], extras: {}, rest: [] };
    const { [REST]: rest, ...read } = extrasRead(reads, rows[0]);
    return { rows: rows.map(toJsonRow), extras: read, rest: toIds(rest) };
  }

  /**
   * Cards by id as JSON rows, in the order of `ids` (missing ones left out),
   * with other modules' reads (`extras`, over `$1` = `ids` and `$2` =
   * `extraParam` when given), on the first row as `listPage` reads them;
   * none when no card is found. With `childrenOf`, only the cards that
   * `children`'s filter keeps now (the later parts of a children listing:
   * one archived or moved away since its id was read goes, as a deleted one).
   */
  async jsonRows(
    ids: number[],
    extras: Record<string, string> = {},
    extraParam?: unknown,
    childrenOf?: ChildrenOf,
  ): Promise<{ rows: CardJsonRow[]; extras: Record<string, unknown> }> {
    if (!ids.length) return { rows: [], extras: {} };
    const params: unknown[] = extraParam === undefined ? [padForGenericPlan(ids)] : [padForGenericPlan(ids), extraParam];
    const under = childrenOf ? ` AND ${childrenWhere('c', `$${params.push(childrenOf.parentId)}`, childrenOf.withArchived)}` : '';
    const rows = await this.sql.rows<RawCardJson & Record<string, unknown>>(
      prepared(`SELECT ${cardJsonColumns('c')}${extraColumnsSql(extras, 'c.id')} FROM cards.cards c WHERE c.id = ANY($1::bigint[])${under} ORDER BY c.id`),
      params,
    );
    const byId = new Map(rows.map((r) => [toId(r.id), r]));
    return {
      rows: ids.flatMap((id) => (byId.has(id) ? [toJsonRow(byId.get(id)!)] : [])),
      extras: rows.length ? extrasRead(extras, rows[0]) : {},
    };
  }

  /**
   * A page of the project listing, in id order (top-level card excluded),
   * and the project's counters, in one statement (the page hangs off the
   * counter row through a lateral join; no counter row → null).
   *
   * After a keyset position (`after`), a range scan of the partial listing
   * index from that id: the same cost at any depth. By offset, a deferred
   * join: the inner query skips `offset` entries of the index without
   * touching the table (an index-only scan while the visibility map is
   * current), and only the page's rows are read from the table; still
   * O(offset) index entries, but not O(offset) table rows. An offset past
   * the total is not scanned at all (a one-time filter on the counter).
   */
  async listPage(
    projectId: number,
    options: { withArchived: boolean; onlyIds: boolean; limit: number; from: ListingStart },
    extras: Record<string, string> = {},
    extraParam: unknown = null,
    readIf = 'true',
  ): Promise<{ cardCount: number; visibleCount: number; rows: CardJsonRow[]; ids: number[]; extras: Record<string, unknown> } | null> {
    const { withArchived, onlyIds, limit, from } = options;
    const ids = listIdsSql(withArchived, from, limit);
    // `readIf` (over $1 and $3, e.g. "the caller is a member") and an offset
    // past the total are one-time filters: when false, no card is read.
    const pastEnd = 'offset' in from ? `$2 < ${withArchived ? 'pc.card_count' : 'pc.visible_count'}` : 'true';
    const page = onlyIds
      ? `SELECT id FROM (${ids}) i WHERE ${pastEnd} AND ${readIf}`
      : `SELECT ${cardJsonColumns('c')} FROM cards.cards c WHERE ${pastEnd} AND ${readIf} AND c.id IN (${ids})`;
    // Other modules' reads (`extras`, over $1 the project and $3 `extraParam`).
    const text = `SELECT pc.card_count AS total_cards, pc.visible_count AS total_visible, page.*${extraColumnsSql(extras, 'page.id')}
         FROM cards.project_counters pc LEFT JOIN LATERAL (${page}) page ON true
        WHERE pc.project_id = $1
        ORDER BY page.id`;
    const rows = await this.sql.rows<RawCardJson & Record<string, unknown> & { total_cards: number; total_visible: number }>(
      // Named: one text per combination of options and limit, on every
      // listing; the plan (the listing index in id order) does not depend on
      // the values (see listIdsSql). Only for the usual limits: a client
      // walking through every per_page must not use up the process's names.
      NAMED_LIMITS.has(limit) ? prepared(text) : text,
      [projectId, 'after' in from ? from.after : from.offset, ...(Object.keys(extras).length ? [extraParam] : [])],
    );
    if (!rows.length) return null;
    const found = rows[0].id === null ? [] : rows;
    return {
      cardCount: Number(rows[0].total_cards),
      visibleCount: Number(rows[0].total_visible),
      rows: onlyIds ? [] : found.map(toJsonRow),
      ids: found.map((r) => toId(r.id)),
      extras: extrasRead(extras, rows[0]),
    };
  }
}

/** The children of the card `parentSql` as a listing shows them: archived ones (and those under an archived card) only `withArchived`. */
function childrenWhere(alias: string, parentSql: string, withArchived: boolean): string {
  return `${alias}.parent_id = ${parentSql}${withArchived ? '' : ` AND NOT ${alias}.hidden`}`;
}

/** The name `children` reads the ids of the children after its `limit` by, beside the other modules' reads. */
const REST = '\0rest';

/** The listed cards' ids in a `withListedReads` statement. */
const LISTED_IDS = 'ARRAY(SELECT l.id FROM listed l)';

function withOfListed(extras: Record<string, string>, ofListed?: ListedCardsReads): Record<string, string> {
  return ofListed ? { ...extras, ...ofListed(LISTED_IDS) } : extras;
}

/**
 * A listing statement: the rows of `listed` (aliased `c`) in `order`, with
 * other modules' reads on the first row. Reads over the listed cards' ids
 * (`ofListed`) make `listed` a CTE that both the rows and the reads read.
 */
function withListedReads(listed: string, order: string, reads: Record<string, string>): string {
  return `WITH listed AS (${listed})
          SELECT c.*${extraColumnsSql(reads, order)} FROM listed c ORDER BY ${order}`;
}

/**
 * Page limits (per_page + 1, the extra row telling whether a next page
 * exists) whose listing texts are named prepared statements: the default
 * per_page (100) and the sizes clients commonly ask for. Other sizes work
 * the same, sent unnamed (planned at each call).
 */
const NAMED_LIMITS = new Set([10, 20, 25, 50, 100, 200, 250, 500, 1000].map((perPage) => perPage + 1));

/** Ids of a listing page: $1 the project, $2 the keyset id or the offset, the limit in the text. */
function listIdsSql(withArchived: boolean, from: ListingStart, limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`a listing limit is a positive integer, not ${limit}`);
  // The limit is written into the text, and the first page has no OFFSET:
  // PostgreSQL plans a LIMIT or OFFSET parameter as 10 % of the rows, and
  // that generic plan (a hash join over the whole card table) is so dear
  // that it would plan the named statement afresh at every call (0.4–0.5 ms
  // of a first page's 0.9). With the numbers in the text the generic plan
  // is the index scan, used from the sixth call on (docs/PERFORMANCE.md).
  const range = 'after' in from ? `AND id > $2 ORDER BY id LIMIT ${limit}` : `ORDER BY id LIMIT ${limit}${from.offset > 0 ? ' OFFSET $2' : ''}`;
  return `SELECT id FROM cards.cards
           WHERE project_id = $1 AND depth > 0 ${withArchived ? '' : 'AND NOT hidden'}
                 ${range}`;
}

/**
 * PostgreSQL costs `= ANY($1)` over an array it does not know (the generic
 * plan) as 10 elements. For fewer ids every custom plan looked cheaper than
 * the generic one, so `jsonRows`, with the other modules' reads in it, was
 * planned again at every call: 0.8–1 ms of planning for a page of one card,
 * more than running it (docs/PERFORMANCE.md, issue 15, eighth pass). Padded
 * to 10 with 0, the id of no card, its custom plans cost what the generic
 * plan does, and PostgreSQL keeps the generic plan from the sixth call on.
 */
const GENERIC_PLAN_IDS = 10;

function padForGenericPlan(ids: number[]): number[] {
  return ids.length >= GENERIC_PLAN_IDS ? ids : [...ids, ...new Array<number>(GENERIC_PLAN_IDS - ids.length).fill(0)];
}
