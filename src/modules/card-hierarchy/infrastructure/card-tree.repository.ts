import { Injectable } from '@nestjs/common';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import { Sql, toId } from '../../../shared/persistence/sql.js';
import type { CardJsonRow, CardState, CreationAlong, TouchAlong } from '../contracts/card-hierarchy.api.js';
import { recordAlongSql } from '../activity/card-stream.recorder.js';
import { CARD_COLUMNS, cardJsonColumns, extraColumnsSql, extrasRead, toJsonRow, toRow, type CardRow, type RawCard, type RawCardJson } from './card-rows.js';

/** What a bulk insert reads back of each new card. */
interface NewChildRow {
  id: number | string;
  parent_id: number | string;
  ref: number;
  position: number;
  created_at: Date | string;
}

export type { CardRow } from './card-rows.js';

/** A bulk insert built by `childrenInsert`, sent by `run`. */
export interface ChildrenInsert {
  run(): Promise<CardRow[]>;
}

export interface NewCardRow {
  projectId: number;
  organizationId: number;
  parent: CardRow | null;
  ref: number;
  title: string;
  position: number;
  createdBy: number | null;
}

const FIND_SQL = prepared(`SELECT ${CARD_COLUMNS} FROM cards.cards WHERE id = $1`);

/**
 * What marking a card changed sets `updated_at` to: the time the statement
 * writes the row, not `now()`, the time its transaction began. Touching is
 * the lock order's last step, after every lock wait, so a write that waited
 * for another no longer commits with a time older than changes a client has
 * already read; what is left is the time between the statement and the
 * commit (docs/card-tree.md, "What updated_at says").
 */
const TOUCHED_AT = 'clock_timestamp()';

/**
 * The relation `walk (id, hidden)`: the subtree of the card `$1` and what
 * each card's `hidden` flag should be, walked down from the card by
 * `parent_id` (one probe of `cards_children_idx` per card): hidden when
 * archived or under a hidden card, the card itself when `rootArchivedSql`
 * holds or its parent is hidden (the parent's flag says whether any
 * ancestor is archived). Not a probe of every ancestor of every card
 * (`a.id = ANY(c.ancestor_ids)`), which is O(subtree × depth): restoring a
 * chain of 5 000 cards took 22.8 s of them.
 */
function hiddenWalkSql(rootArchivedSql: string): string {
  return `WITH RECURSIVE walk (id, hidden) AS (
            SELECT r.id, ${rootArchivedSql} OR coalesce(p.hidden, false)
              FROM cards.cards r LEFT JOIN cards.cards p ON p.id = r.parent_id
             WHERE r.id = $1
            UNION ALL
            SELECT c.id, w.hidden OR c.is_archived FROM walk w JOIN cards.cards c ON c.parent_id = w.id)`;
}

/**
 * The `card.created` entries of the rows of the relation `inserted` (id,
 * project_id, parent_id, ref, title), by the user bound at `userParam`, with
 * the payload `CardCreated` carries, in ref order: the relation that
 * `recordAlongSql` records.
 */
function createdEntriesSql(userParam: string): string {
  return `SELECT id AS card_id, project_id, 'card.created' AS action, ${userParam}::bigint AS user_id, ref AS ord,
                 jsonb_strip_nulls(jsonb_build_object('title', title, 'ref', ref, 'parent_id', parent_id)) AS data
            FROM inserted`;
}

/**
 * `insertChildChecked`'s statement: a card creation's whole write of the tree.
 * It locks the parent (`FOR UPDATE`), and only when `allowedSql` holds for
 * it (the caller's role allows the write) takes the project's next ref,
 * inserts the card last among its siblings and records its `card.created`
 * entry (writing along; one text per kind, as `system` decides). The parent
 * is read from its locked row, so a concurrent move or archive is seen. The
 * position comes from `cards.next_child_position`, which reads the siblings
 * after the lock is granted (see its migration). Its `created_at` and
 * `updated_at` are taken with the counter row, after both waits (`TOUCHED_AT`).
 * `extras` (another module's SQL over the parent, aliased `c`) are read on the
 * answer's row.
 * Parameters: $1 parent, $2 user, $3 title.
 */
function insertChildSql(allowedSql: string, extras: Record<string, string>, options: { system?: boolean }): string {
  return prepared(
    `WITH parent AS (
       SELECT c.id, c.project_id, c.organization_id, c.ancestor_ids, c.depth, c.hidden
         FROM cards.cards c
        WHERE c.id = $1 AND ${allowedSql}
          FOR UPDATE OF c),
     r AS (
       UPDATE cards.project_counters
          SET next_ref = next_ref + 1, card_count = card_count + 1,
              visible_count = visible_count + (SELECT CASE WHEN hidden THEN 0 ELSE 1 END FROM parent)
        WHERE project_id = (SELECT project_id FROM parent)
        RETURNING next_ref - 1 AS ref, ${TOUCHED_AT} AS at),
     inserted AS (
       INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title,
                                position, hidden, created_by, created_at, updated_at)
       SELECT p.project_id, p.organization_id, p.id, p.ancestor_ids || p.id, p.depth + 1, r.ref, $3,
              cards.next_child_position(p.id), p.hidden, $2, r.at, r.at
         FROM parent p, r
       RETURNING ${CARD_COLUMNS}),
     created AS (${createdEntriesSql('$2')}),
     recorded AS (${recordAlongSql('created', options)})
   SELECT i.*${extraColumnsSql(extras)} FROM inserted i, parent c`,
  );
}

/**
 * SQL of the card tree. Every change to sibling positions happens while the
 * parent row is locked, so positions stay dense under concurrency.
 */
@Injectable()
export class CardTreeRepository {
  constructor(private readonly sql: Sql) {}

  async find(id: number): Promise<CardRow | null> {
    const rows = await this.sql.rows<RawCard>(FIND_SQL, [id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * The card with values of other modules read in the same statement (STYLE.md
   * §2.6): `extras` maps a name to SQL over the card's row, aliased `c`
   * (`c.project_id`, `c.organization_id`), given by that module's API — the caller's role, which
   * workspace owns, or a composing module's read — and `params` are their
   * parameters, from `$2` on. `FOR UPDATE` of the card when `lock`.
   */
  async findWith(
    id: number,
    extras: Record<string, string>,
    params: unknown[],
    lock: boolean,
  ): Promise<{ card: CardRow; extras: Record<string, unknown> } | null> {
    const select = extraColumnsSql(extras);
    const rows = await this.sql.rows<RawCard & Record<string, unknown>>(
      // One text per combination of extras: few, and on every card route.
      prepared(`SELECT ${CARD_COLUMNS}${select} FROM cards.cards c WHERE c.id = $1${lock ? ' FOR UPDATE OF c' : ''}`),
      [id, ...params],
    );
    return rows[0] ? { card: toRow(rows[0]), extras: extrasRead(extras, rows[0]) } : null;
  }

  /**
   * `findWith` holding the card's row FOR NO KEY UPDATE until the transaction
   * ends: the lock of the UPDATE that touches it (`update`), taken without
   * touching it, so a write that then changes nothing leaves `updated_at` as
   * it was. Writers of the card wait for it as for a touch.
   */
  async lockToTouchWith(id: number, extras: Record<string, string>, params: unknown[]): Promise<{ card: CardRow; extras: Record<string, unknown> } | null> {
    const select = extraColumnsSql(extras);
    const rows = await this.sql.rows<RawCard & Record<string, unknown>>(
      prepared(`SELECT ${CARD_COLUMNS}${select} FROM cards.cards c WHERE c.id = $1 FOR NO KEY UPDATE OF c`),
      [id, ...params],
    );
    return rows[0] ? { card: toRow(rows[0]), extras: extrasRead(extras, rows[0]) } : null;
  }

  /**
   * `CardHierarchyApi.touchCurrent`'s statement: locks the card's row (FOR
   * NO KEY UPDATE, the touch's lock) only if it is still the version the
   * statement's snapshot holds (`seen`), `allowedSql` (over the row `c`, the
   * user at `$2`) and `along`'s guard hold; `along`'s items write over
   * `touched`, its entries are recorded, the card's `updated_at` is set only
   * when there are entries (a write that changes nothing records nothing and
   * leaves it), and `extras` are read over the row as it then is, which
   * comes back as a `CardJsonRow`. A writer that changed the row after the
   * snapshot was taken, or holds it uncommitted (then the lock waits for
   * it), leaves a newer version when it changed something: PostgreSQL
   * re-checks the WHERE on that version with `seen` as first read, the
   * versions differ, and nothing is locked or written. Null when nothing was.
   */
  async touchCurrent(
    id: number,
    userId: number,
    allowedSql: string,
    along: TouchAlong,
    extras: Record<string, string>,
  ): Promise<{ card: CardJsonRow; extras: Record<string, unknown>; along: unknown } | null> {
    const params: unknown[] = [id, userId];
    const written = along.sql((value) => `$${params.push(value)}`);
    const rows = await this.sql.rows<RawCardJson & Record<string, unknown>>(
      prepared(`WITH seen AS (SELECT xmin AS version FROM cards.cards WHERE id = $1),
       held AS (
         SELECT ${CARD_COLUMNS} FROM cards.cards c, seen
          WHERE c.id = $1 AND c.xmin = seen.version AND ${allowedSql} AND ${written.guard}
            FOR NO KEY UPDATE OF c),
       touched AS (SELECT id AS card_id, project_id FROM held),
       ${written.items},
       recorded AS (${recordAlongSql(written.entries)}),
       bumped AS (
         UPDATE cards.cards SET updated_at = ${TOUCHED_AT}
          WHERE id = (SELECT card_id FROM touched) AND EXISTS (SELECT 1 FROM ${written.entries})
          RETURNING ${CARD_COLUMNS}),
       touched_row AS (SELECT * FROM bumped UNION ALL SELECT * FROM held WHERE NOT EXISTS (SELECT 1 FROM bumped))
       SELECT ${cardJsonColumns('c')}${extraColumnsSql(extras)}, ${written.result} AS along FROM touched_row c`),
      params,
    );
    return rows[0] ? { card: toJsonRow(rows[0]), extras: extrasRead(extras, rows[0]), along: rows[0].along } : null;
  }

  async findMany(ids: number[]): Promise<CardRow[]> {
    if (!ids.length) return [];
    const rows = await this.sql.rows<RawCard>(`SELECT ${CARD_COLUMNS} FROM cards.cards WHERE id = ANY($1::bigint[])`, [ids]);
    return rows.map(toRow);
  }

  /** Locks the given cards in id order (one lock order for every transaction: no deadlock). */
  async lockMany(ids: number[]): Promise<CardRow[]> {
    return (await this.lockManyWith(ids, {}, [])).map((f) => f.card);
  }

  /** `lockMany` with values of other modules read along per card (as `findWith`; `params` from `$2` on). */
  async lockManyWith(ids: number[], extras: Record<string, string>, params: unknown[]): Promise<Array<{ card: CardRow; extras: Record<string, unknown> }>> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    const select = extraColumnsSql(extras);
    const rows = await this.sql.rows<RawCard & Record<string, unknown>>(
      prepared(`SELECT ${CARD_COLUMNS}${select} FROM cards.cards c WHERE c.id = ANY($1::bigint[]) ORDER BY c.id FOR UPDATE OF c`),
      [unique, ...params],
    );
    return rows.map((r) => ({ card: toRow(r), extras: extrasRead(extras, r) }));
  }

  /**
   * Holds a card's key (FOR KEY SHARE) so it cannot be deleted before we
   * commit; false when it is already gone. Lets comments answer 404 instead of
   * failing on the stream's foreign key when a deletion wins the race.
   */
  async holdKey(id: number): Promise<boolean> {
    const rows = await this.sql.rows<unknown>(`SELECT id FROM cards.cards WHERE id = $1 FOR KEY SHARE`, [id]);
    return rows.length > 0;
  }

  /**
   * FOR KEY SHARE on the given cards in ascending id order (the lock their
   * foreign keys take): no deletion until we commit, while plain updates
   * (titles, touches) go on. Missing cards are skipped, and with
   * `organizationId` those of other teams too. `wait: false` fails at once
   * (55P03) on a card another transaction holds FOR UPDATE. The ids locked.
   */
  async keyShareMany(ids: number[], wait: boolean, organizationId?: number): Promise<number[]> {
    return this.lockRows(ids, 'KEY SHARE', wait, organizationId);
  }

  /**
   * FOR NO KEY UPDATE on the given cards in ascending id order: the lock the
   * UPDATE that marks them changed takes, taken first (see
   * `CardHierarchyApi.lockCardsToTouch`). Missing cards are skipped; the ids locked.
   */
  async noKeyUpdateMany(ids: number[], wait: boolean): Promise<number[]> {
    return this.lockRows(ids, 'NO KEY UPDATE', wait);
  }

  /** FOR UPDATE on the given cards in ascending id order (a project's, `ProjectCardLocksService`). Missing cards are skipped; the ids locked. */
  async forUpdateMany(ids: number[], wait: boolean): Promise<number[]> {
    return this.lockRows(ids, 'UPDATE', wait);
  }

  private async lockRows(ids: number[], mode: 'KEY SHARE' | 'NO KEY UPDATE' | 'UPDATE', wait: boolean, organizationId?: number): Promise<number[]> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (!unique.length) return [];
    const team = organizationId === undefined ? '' : ' AND organization_id = $2';
    const rows = await this.sql.rows<{ id: number | string }>(
      `SELECT id FROM cards.cards WHERE id = ANY($1::bigint[])${team} ORDER BY id FOR ${mode}${wait ? '' : ' NOWAIT'}`,
      organizationId === undefined ? [unique] : [unique, organizationId],
    );
    return rows.map((r) => Number(r.id));
  }

  /** The card and all its descendants (GIN index on ancestor_ids), ascending id. */
  async subtreeIds(cardId: number): Promise<number[]> {
    const rows = await this.sql.rows<{ id: number | string }>(
      `SELECT id FROM cards.cards WHERE id = $1 OR ancestor_ids @> ARRAY[$1]::bigint[] ORDER BY id`,
      [cardId],
    );
    return rows.map((r) => toId(r.id));
  }

  /**
   * Number of children. Positions are dense (0 … n−1) under the parent's lock,
   * so the highest position + 1 is the count: one descent of
   * `cards_children_idx (parent_id, position)` instead of counting every sibling.
   */
  async childCount(parentId: number): Promise<number> {
    const [row] = await this.sql.rows<{ n: number }>(
      `SELECT coalesce(max(position) + 1, 0)::int AS n FROM cards.cards WHERE parent_id = $1`,
      [parentId],
    );
    return Number(row.n);
  }

  async createCounters(projectId: number): Promise<void> {
    await this.sql.run(`INSERT INTO cards.project_counters (project_id) VALUES ($1)`, [projectId]);
  }

  /**
   * Holds the project's counter row until the commit, as `adjustCounters`
   * would, for a write that changes the totals only after it has taken other
   * modules' locks (step 2 of the lock order comes before them).
   */
  async lockCounters(projectId: number): Promise<void> {
    await this.sql.run(`SELECT 1 FROM cards.project_counters WHERE project_id = $1 FOR NO KEY UPDATE`, [projectId]);
  }

  async adjustCounters(projectId: number, cards: number, visible: number): Promise<void> {
    if (!cards && !visible) return;
    await this.sql.run(
      `UPDATE cards.project_counters SET card_count = card_count + $2, visible_count = visible_count + $3
        WHERE project_id = $1`,
      [projectId, cards, visible],
    );
  }

  async insert(c: NewCardRow): Promise<CardRow> {
    const ancestors = c.parent ? [...c.parent.ancestorIds, c.parent.id] : [];
    const rows = await this.sql.rows<RawCard>(
      `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title,
                                position, hidden, created_by)
       VALUES ($1, $2, $3, $4::bigint[], $5, $6, $7, $8, $9, $10)
       RETURNING ${CARD_COLUMNS}`,
      [
        c.projectId,
        c.organizationId,
        c.parent?.id ?? null,
        ancestors,
        ancestors.length,
        c.ref,
        c.title,
        c.position,
        c.parent?.hidden ?? false,
        c.createdBy,
      ],
    );
    return toRow(rows[0]);
  }

  /**
   * Creates the last child of `parentId` in one statement (see
   * `insertChildSql`), if `allowedSql` (SQL over the parent `c` and the user
   * at `$2`) allows it. null when nothing was inserted: no such parent, not
   * allowed, or the project's counters gone (project deleted); the caller
   * tells which. The counter row is locked after the parent, as in the lock order.
   */
  async insertChildChecked(
    parentId: number,
    title: string,
    createdBy: number,
    allowedSql: string,
    extras: Record<string, string>,
    options: { system?: boolean } = {},
  ): Promise<{ card: CardRow; extras: Record<string, unknown> } | null> {
    const rows = await this.sql.rows<RawCard & Record<string, unknown>>(insertChildSql(allowedSql, extras, options), [
      parentId,
      createdBy,
      title,
    ]);
    return rows[0] ? { card: toRow(rows[0]), extras: extrasRead(extras, rows[0]) } : null;
  }

  async cardsWithTitles(projectId: number, titles: string[]): Promise<Array<{ id: number; title: string }>> {
    if (!titles.length) return [];
    const rows = await this.sql.rows<{ id: string | number; title: string }>(
      `SELECT id, title FROM cards.cards WHERE project_id = $1 AND depth > 0 AND title = ANY($2::text[])`,
      [projectId, titles],
    );
    return rows.map((r) => ({ id: toId(r.id), title: r.title }));
  }

  async cardCounters(projectId: number): Promise<{ nextRef: number; cardCount: number } | null> {
    const row = await this.sql.one<{ next_ref: number; card_count: string | number }>(
      `SELECT next_ref, card_count FROM cards.project_counters WHERE project_id = $1`,
      [projectId],
    );
    return row ? { nextRef: Number(row.next_ref), cardCount: Number(row.card_count) } : null;
  }

  async cardsWithRefs(projectId: number, refs: number[]): Promise<Array<{ id: number; ref: number }>> {
    if (!refs.length) return [];
    const rows = await this.sql.rows<{ id: string | number; ref: number }>(
      `SELECT id, ref FROM cards.cards WHERE project_id = $1 AND ref > 0 AND ref = ANY($2::int[])`,
      [projectId, refs],
    );
    return rows.map((r) => ({ id: toId(r.id), ref: Number(r.ref) }));
  }

  /** By `cards_children_idx` (parent_id, position). */
  async childrenWithTitles(parentIds: number[], titles: string[]): Promise<Array<{ parentId: number; title: string }>> {
    if (!parentIds.length || !titles.length) return [];
    const rows = await this.sql.rows<{ parent_id: string | number; title: string }>(
      `SELECT DISTINCT parent_id, title FROM cards.cards WHERE parent_id = ANY($1::bigint[]) AND title = ANY($2::text[])`,
      [parentIds, titles],
    );
    return rows.map((r) => ({ parentId: toId(r.parent_id), title: r.title }));
  }

  /**
   * Inserts many children at once (bulk work): `parents` are locked by the
   * caller and all of one project. Refs are taken from the counter in one
   * step, in the order of `entries`; each card goes last among its parent's
   * children, in that order. Returns the rows in the order of `entries`;
   * all of them created (and updated) at the time the counter row was taken
   * (`TOUCHED_AT`). The same statement records each card's `card.created` entry, by the
   * creator, with the payload `CardCreated` carries (`recordAlongSql`: kind
   * by `system`, entries in ref order); `along` adds another module's writes
   * and their entries (after the cards' own) to the statement.
   */
  insertChildren(
    parents: CardRow[],
    entries: Array<{ parentId: number; title: string }>,
    createdBy: number,
    options: { system?: boolean; along?: CreationAlong } = {},
  ): Promise<CardRow[]> {
    return this.childrenInsert(parents, entries, createdBy, options).run();
  }

  /**
   * `insertChildren` built but not sent: a sequence of creations builds the
   * next statement's parameters while the database runs the one before.
   */
  childrenInsert(
    parents: CardRow[],
    entries: Array<{ parentId: number; title: string }>,
    createdBy: number,
    options: { system?: boolean; along?: CreationAlong } = {},
  ): ChildrenInsert {
    if (!entries.length) return { run: () => Promise.resolve([]) };
    const byId = new Map(parents.map((p) => [p.id, p]));
    const visible = entries.filter((e) => !byId.get(e.parentId)!.hidden).length;
    const params: unknown[] = [
      parents[0].projectId,
      entries.length,
      visible,
      entries.map((e) => e.parentId),
      entries.map((e) => e.title),
      parents.map((p) => p.id),
      parents[0].organizationId,
      createdBy,
    ];
    const along = options.along?.sql((value) => `$${params.push(value)}`);
    // `base` is materialized so each parent's next position is read once, not once per new card.
    const sql = `WITH r AS (
         UPDATE cards.project_counters
            SET next_ref = next_ref + $2, card_count = card_count + $2, visible_count = visible_count + $3
          WHERE project_id = $1
          RETURNING next_ref - $2 AS first_ref, ${TOUCHED_AT} AS at),
       input AS (SELECT * FROM unnest($4::bigint[], $5::text[]) WITH ORDINALITY AS i(parent_id, title, ord)),
       base AS MATERIALIZED (
         SELECT p.id, p.ancestor_ids || p.id AS ancestors, p.hidden,
                (SELECT coalesce(max(c.position) + 1, 0) FROM cards.cards c WHERE c.parent_id = p.id) AS next_position
           FROM cards.cards p WHERE p.id = ANY($6::bigint[])),
       inserted AS (
         INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title,
                                  position, hidden, created_by, created_at, updated_at)
         SELECT $1, $7, i.parent_id, b.ancestors, cardinality(b.ancestors), r.first_ref + i.ord::int - 1, i.title,
                b.next_position + (row_number() OVER (PARTITION BY i.parent_id ORDER BY i.ord))::int - 1, b.hidden, $8, r.at, r.at
           FROM input i JOIN base b ON b.id = i.parent_id CROSS JOIN r
          ORDER BY i.ord
         RETURNING id, project_id, parent_id, ref, title, position, created_at),
       created AS (${createdEntriesSql('$8')}),
       ${along ? `new_cards AS (SELECT id AS card_id, project_id, ref - (SELECT first_ref FROM r) + 1 AS ord FROM inserted), ${along.items},` : ''}
       recorded AS (${recordAlongSql(along ? streamEntriesWith(along.entries) : 'created', options)})
       SELECT id, parent_id, ref, position, created_at FROM inserted`;
    return { run: async () => newChildRows(await this.sql.rows<NewChildRow>(sql, params), byId, entries) };
  }

  /** Many titles in one statement (the rows travel as one JSON array of `[id, title]`). */
  async setTitles(entries: Array<{ cardId: number; title: string }>): Promise<void> {
    if (!entries.length) return;
    await this.sql.run(
      `UPDATE cards.cards c SET title = u->>1, updated_at = ${TOUCHED_AT}
         FROM jsonb_array_elements($1::jsonb) AS u
        WHERE c.id = (u->>0)::bigint`,
      [JSON.stringify(entries.map((e) => [e.cardId, e.title]))],
    );
  }

  /**
   * Marks cards changed (`updated_at`) in one statement. Callers of many hold
   * their rows already (in ascending id); for one card the caller holds its
   * row, or the statement takes the touch's lock.
   */
  async touchMany(ids: number[]): Promise<void> {
    if (!ids.length) return;
    await this.sql.run(`UPDATE cards.cards SET updated_at = ${TOUCHED_AT} WHERE id = ANY($1::bigint[])`, [[...new Set(ids)]]);
  }

  /** Many cards' models in one statement (the rows travel as one JSON array of `[id, model id or null]`). */
  async setModelIds(entries: Array<{ cardId: number; modelId: number | null }>): Promise<void> {
    if (!entries.length) return;
    await this.sql.run(
      `UPDATE cards.cards c SET model_id = (u->>1)::bigint, updated_at = ${TOUCHED_AT}
         FROM jsonb_array_elements($1::jsonb) AS u
        WHERE c.id = (u->>0)::bigint`,
      [JSON.stringify(entries.map((e) => [e.cardId, e.modelId]))],
    );
  }

  /**
   * Sets what `changes` gives, and marks the card changed, only when one of
   * them differs from the row: a write that changes nothing leaves the row
   * as it was, `updated_at` and its version (which a guarded write would
   * take for a change) included.
   */
  async update(id: number, changes: { title?: string; state?: CardState; modelId?: number | null }): Promise<void> {
    const params: unknown[] = [id];
    const columns: Array<[string, unknown]> = [
      ['title', changes.title],
      ['state', changes.state],
      ['model_id', changes.modelId],
    ];
    const given = columns.filter(([, value]) => value !== undefined).map(([column, value]) => [column, `$${params.push(value)}`]);
    if (!given.length) return;
    await this.sql.run(
      `UPDATE cards.cards SET ${given.map(([column, p]) => `${column} = ${p}`).join(', ')}, updated_at = ${TOUCHED_AT}
        WHERE id = $1 AND (${given.map(([column, p]) => `${column} IS DISTINCT FROM ${p}`).join(' OR ')})`,
      params,
    );
  }

  /** Closes the gap a card leaves at `position` among its old siblings. */
  async closeGap(parentId: number, position: number): Promise<void> {
    await this.sql.run(`UPDATE cards.cards SET position = position - 1 WHERE parent_id = $1 AND position > $2`, [
      parentId,
      position,
    ]);
  }

  /** Opens a slot at `position` among a parent's children. */
  async openGap(parentId: number, position: number): Promise<void> {
    await this.sql.run(`UPDATE cards.cards SET position = position + 1 WHERE parent_id = $1 AND position >= $2`, [
      parentId,
      position,
    ]);
  }

  /** Moves a card to another slot under the same parent, shifting the cards in between. */
  async reorder(card: CardRow, to: number): Promise<void> {
    const from = card.position;
    if (from === to) return;
    if (to < from) {
      await this.sql.run(
        `UPDATE cards.cards SET position = position + 1 WHERE parent_id = $1 AND position >= $2 AND position < $3`,
        [card.parentId, to, from],
      );
    } else {
      await this.sql.run(
        `UPDATE cards.cards SET position = position - 1 WHERE parent_id = $1 AND position > $2 AND position <= $3`,
        [card.parentId, from, to],
      );
    }
    await this.sql.run(`UPDATE cards.cards SET position = $2, updated_at = ${TOUCHED_AT} WHERE id = $1`, [card.id, to]);
  }

  /**
   * Re-roots a subtree under a new parent: the card and each descendant get the
   * new parent's chain in place of the old one (the GIN index finds the subtree,
   * so the cost follows the subtree size).
   */
  async reparent(card: CardRow, parent: CardRow, position: number): Promise<void> {
    const prefix = [...parent.ancestorIds, parent.id];
    await this.sql.run(`UPDATE cards.cards SET parent_id = $2, position = $3, updated_at = ${TOUCHED_AT} WHERE id = $1`, [
      card.id,
      parent.id,
      position,
    ]);
    await this.sql.run(
      `UPDATE cards.cards
          SET ancestor_ids = $2::bigint[] || ancestor_ids[$3:],
              depth = cardinality($2::bigint[] || ancestor_ids[$3:])
        WHERE id = $1 OR ancestor_ids @> ARRAY[$1]::bigint[]`,
      [card.id, prefix, card.depth + 1],
    );
  }

  /** The greatest depth among the cards `ids`. */
  async deepest(ids: number[]): Promise<number> {
    const [row] = await this.sql.rows<{ depth: number | null }>(`SELECT max(depth) AS depth FROM cards.cards WHERE id = ANY($1::bigint[])`, [ids]);
    return Number(row.depth ?? 0);
  }

  /** Counts of a subtree (the card included): all cards and the visible ones. */
  async subtreeCounts(cardId: number): Promise<{ all: number; visible: number }> {
    const [row] = await this.sql.rows<{ all: number; visible: number }>(
      `SELECT count(*)::int AS all, (count(*) FILTER (WHERE NOT hidden))::int AS visible
         FROM cards.cards WHERE id = $1 OR ancestor_ids @> ARRAY[$1]::bigint[]`,
      [cardId],
    );
    return { all: Number(row.all), visible: Number(row.visible) };
  }

  /**
   * Sets a card's archive flag and recomputes `hidden` for its subtree in one
   * statement: each row is written once. (A second write of a row this
   * transaction already updated makes PostgreSQL re-check its foreign key,
   * which share-locks the card's parent, a row we do not hold: that deadlocked
   * against deletions holding the parent.) The card's own new flag is not yet
   * visible to the statement, so `hiddenWalkSql` is given it.
   */
  async setArchived(cardId: number, archived: boolean): Promise<void> {
    await this.sql.run(
      `${hiddenWalkSql('$2')}
       UPDATE cards.cards c
          SET is_archived = CASE WHEN c.id = $1 THEN $2 ELSE c.is_archived END,
              updated_at  = CASE WHEN c.id = $1 THEN ${TOUCHED_AT} ELSE c.updated_at END,
              hidden = w.hidden
         FROM walk w
        WHERE c.id = w.id AND (c.id = $1 OR c.hidden <> w.hidden)`,
      [cardId, archived],
    );
  }

  /** Recomputes `hidden` (archived or under an archived card) for a subtree; writes only the rows whose flag changes. */
  async refreshHidden(cardId: number): Promise<void> {
    await this.sql.run(
      `${hiddenWalkSql('r.is_archived')}
       UPDATE cards.cards c SET hidden = w.hidden FROM walk w WHERE c.id = w.id AND c.hidden <> w.hidden`,
      [cardId],
    );
  }

  /** Deletes a card; its subtree and stream go with it through ON DELETE CASCADE. */
  async delete(cardId: number): Promise<void> {
    await this.sql.run(`DELETE FROM cards.cards WHERE id = $1`, [cardId]);
  }

  async deleteProject(projectId: number): Promise<void> {
    await this.sql.run(`DELETE FROM cards.cards WHERE project_id = $1 AND parent_id IS NULL`, [projectId]);
    await this.sql.run(`DELETE FROM cards.project_counters WHERE project_id = $1`, [projectId]);
  }

}

/**
 * The stream entries of a bulk creation with something written along: the
 * cards' own `card.created` entries first (in ref order), then the other
 * module's, in its order.
 */
function streamEntriesWith(alongEntries: string): string {
  return `(SELECT card_id, project_id, action, user_id, data, row_number() OVER (ORDER BY phase, ord) AS ord
             FROM (SELECT card_id, project_id, action, user_id, data, ord, 0 AS phase FROM created
                   UNION ALL
                   SELECT card_id, project_id, action, user_id, data, ord, 1 AS phase FROM ${alongEntries}) e) AS entries`;
}

/**
 * The bulk insert's rows as card rows, in the order of `entries`. Only what
 * differs between the new rows comes back (less to send and parse per card);
 * the rest is what the insert wrote: the parent's place and visibility, the
 * column defaults (state, not archived, no model, updated when created).
 * Refs follow `entries`, so in ref order the k-th row is the k-th entry.
 */
function newChildRows(rows: NewChildRow[], parents: Map<number, CardRow>, entries: Array<{ title: string }>): CardRow[] {
  return rows
    .sort((a, b) => Number(a.ref) - Number(b.ref))
    .map((r, k): CardRow => {
      const parent = parents.get(toId(r.parent_id))!;
      const createdAt = new Date(r.created_at);
      const ancestorIds = [...parent.ancestorIds, parent.id];
      return {
        id: toId(r.id),
        projectId: parent.projectId,
        organizationId: parent.organizationId,
        parentId: parent.id,
        ancestorIds,
        depth: ancestorIds.length,
        ref: Number(r.ref),
        title: entries[k].title,
        state: 'undecided',
        isArchived: false,
        hidden: parent.hidden,
        position: Number(r.position),
        modelId: null,
        createdAt,
        updatedAt: createdAt,
      };
    });
}
