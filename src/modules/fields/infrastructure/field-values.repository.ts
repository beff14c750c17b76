import { Injectable } from '@nestjs/common';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import { jsonColumn, Sql, toId as n, type Row as Raw } from '../../../shared/persistence/sql.js';
import type { FieldDefinition } from '../domain/field-definition.js';
import { FIELD_TYPE_HANDLERS, fieldTypeHandler, type ValueStorage } from '../domain/values/index.js';

export interface ScalarRow {
  cardId: number;
  attributeId: number;
  value: unknown;
}

/**
 * The payload of `card.attribute_changed` for a value set, as
 * `CardAttributeChanged` carries it, from the field `a`, the input row `i`
 * (its `value`) and `fromSql`, the value it replaced.
 */
function valueSetData(fromSql: string): string {
  return `jsonb_build_object('attribute_id', a.id, 'attribute', a.name, 'type', a.type, 'operation', 'set',
                             'from', ${fromSql}, 'to', i.value)`;
}

/** The payload for a first value (`from` null). */
const FIRST_VALUE_DATA = valueSetData('NULL');

/**
 * Writing along with a bulk creation (CardHierarchyApi's `CreationAlong`):
 * `WITH` items that insert the new cards' scalar values from the JSON array
 * bound at `rowsParam` (`[card ord, attribute id, value]` rows, ord as in
 * `new_cards`), and the relation `values_changed` of their
 * `card.attribute_changed` entries by the user bound at `userParam`, in the
 * order of the rows. The same rows and entries as `insertScalars` writes.
 */
export function newScalarsAlongSql(rowsParam: string, userParam: string): { items: string; entries: string } {
  return {
    items: `value_input AS (
              SELECT (r->>0)::bigint AS card_ord, (r->>1)::bigint AS attribute_id, r->2 AS value, ord
                FROM jsonb_array_elements(${rowsParam}::jsonb) WITH ORDINALITY AS x(r, ord)),
            values_written AS (
              INSERT INTO fields.scalar_values (card_id, attribute_id, value)
              SELECT c.card_id, v.attribute_id, v.value FROM value_input v JOIN new_cards c ON c.ord = v.card_ord ORDER BY v.ord),
            values_changed AS (
              SELECT c.card_id, a.project_id, 'card.attribute_changed' AS action, ${userParam}::bigint AS user_id, i.ord,
                     ${FIRST_VALUE_DATA} AS data
                FROM value_input i JOIN new_cards c ON c.ord = i.card_ord JOIN fields.attributes a ON a.id = i.attribute_id)`,
    entries: 'values_changed',
  };
}

/**
 * `WITH` items that upsert scalar values from the relation `value_input
 * (card_id, attribute_id, value, ord)`, reading what each replaced in the
 * statement's snapshot (so the caller must hold the cards, or know no
 * writer got in since: see `scalarsTouchAlongSql`), and the relation
 * `values_changed` of the `card.attribute_changed` entries, by the user at
 * `userParam`, of the values that changed, with `before` and `after`
 * (jsonb). An unchanged value writes and records nothing.
 */
function scalarUpsertItems(userParam: string): string {
  // Found once (MATERIALIZED), by the card (`attribute_id + 0` leaves the
  // primary key, led by card_id, as the only index to use). Without
  // statistics (a new install's first import) the planner looked the
  // replaced values up per written row by attribute, through a value index
  // led by attribute_id: one scan of all the field's values per row.
  return `values_before AS MATERIALIZED (
            SELECT s.card_id, s.attribute_id, s.value FROM fields.scalar_values s
              JOIN value_input i ON i.card_id = s.card_id AND i.attribute_id = s.attribute_id + 0),
          values_written AS (
            INSERT INTO fields.scalar_values (card_id, attribute_id, value)
            SELECT card_id, attribute_id, value FROM value_input
            ON CONFLICT (card_id, attribute_id) DO UPDATE SET value = EXCLUDED.value
             WHERE fields.scalar_values.value IS DISTINCT FROM EXCLUDED.value
            RETURNING card_id, attribute_id, value),
          values_changed AS (
            SELECT w.card_id, w.attribute_id, a.project_id, 'card.attribute_changed' AS action, ${userParam}::bigint AS user_id, i.ord,
                   ${valueSetData('b.value')} AS data, b.value AS before, w.value AS after
              FROM values_written w
              JOIN value_input i ON i.card_id = w.card_id AND i.attribute_id = w.attribute_id
              JOIN fields.attributes a ON a.id = w.attribute_id
              LEFT JOIN values_before b ON b.card_id = w.card_id AND b.attribute_id = w.attribute_id)`;
}

/**
 * Writing along with a guarded touch (CardHierarchyApi's `TouchAlong`): the
 * touched card's scalar values upserted from the JSON array bound at
 * `rowsParam` (`[attribute id, value]` rows) and their entries
 * (`scalarUpsertItems`), the rows and entries `replaceScalars` writes. The
 * guard makes the snapshot current: no value writer got in between.
 * `result`: the changed values as a JSON array of `[attribute id, before,
 * after]`, in the order of the rows.
 */
export function scalarsTouchAlongSql(rowsParam: string, userParam: string): { items: string; entries: string; result: string } {
  return {
    items: `value_input AS (
              SELECT t.card_id, (r->>0)::bigint AS attribute_id, r->1 AS value, ord
                FROM touched t, jsonb_array_elements(${rowsParam}::jsonb) WITH ORDINALITY AS x(r, ord)),
            ${scalarUpsertItems(userParam)}`,
    entries: 'values_changed',
    result: `(SELECT coalesce(json_agg(json_build_array(attribute_id, before, after) ORDER BY ord), '[]'::json) FROM values_changed)`,
  };
}

/** One entry of a list field (members: a user id; relationships: a target card id). */
export interface ListRow {
  cardId: number;
  attributeId: number;
  ref: number;
}

export interface VoteRow {
  cardId: number;
  attributeId: number;
  userId: number;
  vote: number;
}

export interface StoredFileRow {
  id: number;
  organizationId: number;
  projectId: number;
  cardId: number;
  attributeId: number;
  name: string;
  size: number;
  mimeType: string;
  storageKey: string;
}

export interface NewStoredFile {
  organizationId: number;
  projectId: number;
  cardId: number;
  attributeId: number;
  name: string;
  size: number;
  mimeType: string;
  storageKey: string;
  createdBy: number;
}


function toFile(r: Raw): StoredFileRow {
  return {
    id: n(r.id),
    organizationId: n(r.organization_id),
    projectId: n(r.project_id),
    cardId: n(r.card_id),
    attributeId: n(r.attribute_id),
    name: String(r.name),
    size: n(r.size),
    mimeType: String(r.mime_type),
    storageKey: String(r.storage_key),
  };
}

const FILE_COLUMNS = 'id, organization_id, project_id, card_id, attribute_id, name, size, mime_type, storage_key';

/** The table of each kind of storage (group_type values are grouping's memberships). */
const VALUE_TABLES: Record<ValueStorage, string | null> = {
  scalar: 'fields.scalar_values',
  members: 'fields.member_values',
  relationships: 'fields.relationship_values',
  likes: 'fields.like_votes',
  files: 'fields.files',
  groups: null,
};

/** The list tables share a shape: (card_id, attribute_id, <ref column>, position). */
export type ListTable = 'members' | 'relationships';
const LIST_TABLES: Record<ListTable, { table: string; column: string }> = {
  members: { table: 'fields.member_values', column: 'user_id' },
  relationships: { table: 'fields.relationship_values', column: 'target_card_id' },
};

/** The kinds of stored values a card's `attributes` may need (ValueStorage without `groups`, which is grouping's). */
export type ValueKind = Exclude<ValueStorage, 'groups'>;

/** One stored value of each kind, as read (a kind without its row type here does not compile). */
export interface ValueRowByKind {
  scalar: ScalarRow;
  members: ListRow;
  relationships: ListRow;
  files: StoredFileRow;
  likes: VoteRow;
}

/** The values of a batch of cards, by kind (empty for a kind not asked for). */
export type CardValueRows = { [K in ValueKind]: Array<ValueRowByKind[K]> };

const listJsonSql = (kind: ListTable, idsSql: string) =>
  `SELECT coalesce(json_agg(json_build_array(card_id, attribute_id, ${LIST_TABLES[kind].column}) ORDER BY card_id, attribute_id, position), '[]'::json)
     FROM ${LIST_TABLES[kind].table} WHERE card_id = ANY(${idsSql})`;

/**
 * Each kind's values of the cards whose ids are the array `idsSql`, as one
 * JSON array, in the order the reads one by one gave them.
 */
const VALUES_JSON_SQL: Record<ValueKind, (idsSql: string) => string> = {
  scalar: (ids) => `SELECT coalesce(json_agg(json_build_array(card_id, attribute_id, value)), '[]'::json)
                      FROM fields.scalar_values WHERE card_id = ANY(${ids})`,
  members: (ids) => listJsonSql('members', ids),
  relationships: (ids) => listJsonSql('relationships', ids),
  files: (ids) => `SELECT coalesce(json_agg(json_build_object(${FILE_COLUMNS.split(', ').map((c) => `'${c}', ${c}`).join(', ')})
                                            ORDER BY card_id, attribute_id, position, id), '[]'::json)
                     FROM fields.files WHERE card_id = ANY(${ids})`,
  likes: (ids) => `SELECT coalesce(json_agg(json_build_array(card_id, attribute_id, user_id, vote) ORDER BY card_id, attribute_id, user_id), '[]'::json)
                     FROM fields.like_votes WHERE card_id = ANY(${ids})`,
};

/** Every kind, in the order of VALUES_JSON_SQL (whose type makes it list them all). */
const VALUE_KINDS = Object.keys(VALUES_JSON_SQL) as ValueKind[];

/**
 * SQL of every value of the cards whose ids are the array `cardIdsSql` (in
 * the caller's statement), all kinds in one JSON object, for a module that
 * reads them along with the cards' rows (STYLE.md §2.6). Each kind is an
 * index scan of its table's primary key per card. With `projectIdSql` (the
 * cards' one project), a kind is read only if the project has a field of a
 * type stored that way: one probe of its definitions instead of a scan per
 * card (a page of a project without fields reads nothing).
 */
export function cardValuesJsonSql(cardIdsSql: string, projectIdSql?: string): string {
  // Built once per pair: the arguments are SQL of the callers' own statements
  // (a handful), and building the text cost a listing page about 1 % of its CPU.
  const key = `${cardIdsSql}\u0000${projectIdSql ?? ''}`;
  let sql = CARD_VALUES_SQL.get(key);
  if (sql === undefined) CARD_VALUES_SQL.set(key, (sql = buildCardValuesJsonSql(cardIdsSql, projectIdSql)));
  return sql;
}

const CARD_VALUES_SQL = new Map<string, string>();

function buildCardValuesJsonSql(cardIdsSql: string, projectIdSql?: string): string {
  const values = (kind: ValueKind) => `(${VALUES_JSON_SQL[kind](cardIdsSql)})`;
  if (projectIdSql === undefined) return `json_build_object(${VALUE_KINDS.map((k) => `'${k}', ${values(k)}`).join(', ')})`;
  // One probe of the project's definitions: the types its fields have (no row, so NULL, without fields).
  const typesOf = (kind: ValueKind) => Object.entries(FIELD_TYPE_HANDLERS).filter(([, h]) => h.storage === kind).map(([type]) => `'${type}'`);
  const read = (kind: ValueKind) => `CASE WHEN f.types && ARRAY[${typesOf(kind).join(', ')}] THEN ${values(kind)} END`;
  return `(SELECT json_build_object(${VALUE_KINDS.map((k) => `'${k}', ${read(k)}`).join(', ')})
             FROM (SELECT array_agg(DISTINCT a.type::text) AS types FROM fields.attributes a WHERE a.project_id = ${projectIdSql}) f
            WHERE f.types IS NOT NULL)`;
}

/** What `cardValuesJsonSql` read (json arrives parsed with pg, as text with PGlite). */
export function valuesFromJson(value: unknown): CardValueRows {
  return valueRowsOf(jsonColumn<Record<string, unknown> | null>(value) ?? {}, new Set(VALUE_KINDS));
}

type Ids = number | string;

/** Each kind's rows from its JSON array, as VALUES_JSON_SQL writes them. */
const ROWS_FROM_JSON: { [K in ValueKind]: (rows: unknown[]) => Array<ValueRowByKind[K]> } = {
  scalar: (rows) => (rows as Array<[Ids, Ids, unknown]>).map(([cardId, attributeId, value]) => ({ cardId: n(cardId), attributeId: n(attributeId), value })),
  members: (rows) => listRows(rows),
  relationships: (rows) => listRows(rows),
  files: (rows) => (rows as Raw[]).map(toFile),
  likes: (rows) =>
    (rows as Array<[Ids, Ids, Ids, Ids]>).map(([cardId, attributeId, userId, vote]) => ({
      cardId: n(cardId),
      attributeId: n(attributeId),
      userId: n(userId),
      vote: n(vote),
    })),
};

function listRows(rows: unknown[]): ListRow[] {
  return (rows as Array<[Ids, Ids, Ids]>).map(([cardId, attributeId, ref]) => ({ cardId: n(cardId), attributeId: n(attributeId), ref: n(ref) }));
}

/** The rows of `kinds` from one JSON array per kind (`read`: by kind, as json or text). */
function valueRowsOf(read: Record<string, unknown>, kinds: ReadonlySet<ValueKind>): CardValueRows {
  const rows = <K extends ValueKind>(kind: K): Array<ValueRowByKind[K]> =>
    kinds.has(kind) ? ROWS_FROM_JSON[kind](jsonColumn<unknown[]>(read[kind] ?? '[]')) : [];
  return { scalar: rows('scalar'), members: rows('members'), relationships: rows('relationships'), files: rows('files'), likes: rows('likes') };
}

/**
 * Values of every field type. Reads take a batch of cards (the card JSON is
 * built for many cards at once); writes happen while the card row is locked
 * by the caller (CardHierarchyApi.touch), so list positions stay consistent.
 */
@Injectable()
export class FieldValuesRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * The values of `kinds` for the cards, in one statement whatever the kinds
   * (one JSON array each), where reading them kind by kind took a round trip
   * each: a page of cards with members and scalar fields was three.
   */
  async valuesOf(cardIds: number[], kinds: ReadonlySet<ValueKind>): Promise<CardValueRows> {
    const asked = VALUE_KINDS.filter((k) => kinds.has(k));
    if (!asked.length || !cardIds.length) return valueRowsOf({}, new Set());
    const row = await this.sql.one(prepared(`SELECT ${asked.map((k) => `(${VALUES_JSON_SQL[k]('$1::bigint[]')}) AS ${k}`).join(', ')}`), [cardIds]);
    return valueRowsOf(row ?? {}, kinds);
  }

  /** Cards whose value of a scalar field equals one of `values` (jsonb equality, so key order does not matter). */
  async cardsWithScalarValues(attributeId: number, values: unknown[]): Promise<Array<{ cardId: number; value: unknown }>> {
    if (!values.length) return [];
    const rows = await this.sql.rows(
      `SELECT card_id, value::text AS value FROM fields.scalar_values
        WHERE attribute_id = $1 AND value = ANY($2::jsonb[])`,
      [attributeId, values.map((v) => JSON.stringify(v))],
    );
    return rows.map((r) => ({ cardId: n(r.card_id), value: JSON.parse(String(r.value)) as unknown }));
  }

  /**
   * Many scalar values of cards that have none yet (new cards of an import),
   * one plain INSERT per chunk; the rows travel as one JSON array of
   * `[card_id, attribute_id, value]` (cheaper to send and parse than array
   * parameters). The same statement records a `card.attribute_changed` entry
   * per value by `userId`, with the payload `CardAttributeChanged` carries for
   * a first value (`from` null), in the order of `rows`: `recordSql` is the
   * stream writer's SQL (CardHierarchyApi.recordAlongSql) over the relation `changed`.
   */
  async insertScalars(
    rows: Array<{ cardId: number; attributeId: number; value: unknown }>,
    userId: number,
    recordSql: string,
  ): Promise<void> {
    for (let at = 0; at < rows.length; at += 5000) {
      const chunk = rows.slice(at, at + 5000);
      await this.sql.run(
        `WITH input AS (
           SELECT (r->>0)::bigint AS card_id, (r->>1)::bigint AS attribute_id, r->2 AS value, ord
             FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(r, ord)),
         written AS (
           INSERT INTO fields.scalar_values (card_id, attribute_id, value)
           SELECT card_id, attribute_id, value FROM input ORDER BY ord),
         changed AS (
           SELECT i.card_id, a.project_id, 'card.attribute_changed' AS action, $2::bigint AS user_id, i.ord,
                  ${FIRST_VALUE_DATA} AS data
             FROM input i JOIN fields.attributes a ON a.id = i.attribute_id)
         ${recordSql}`,
        [JSON.stringify(chunk.map((r) => [r.cardId, r.attributeId, r.value])), userId],
      );
    }
  }

  /**
   * Many scalar values of existing cards, each replacing the card's value of
   * that field, in one statement per chunk; returns the values that changed
   * with what they replaced (null when the card had none). A (card, field)
   * pair may appear once per call. The same statement records a
   * `card.attribute_changed` entry by `userId` for each changed value, in the
   * order of the rows (`recordSql`: CardHierarchyApi.recordAlongSql over the
   * relation `values_changed`: `scalarUpsertItems`), with the payload `CardAttributeChanged` carries.
   */
  async replaceScalars(
    rows: Array<{ cardId: number; attributeId: number; value: unknown }>,
    userId: number,
    recordSql: string,
  ): Promise<Array<{ cardId: number; attributeId: number; before: unknown }>> {
    const changed: Array<{ cardId: number; attributeId: number; before: unknown }> = [];
    for (let at = 0; at < rows.length; at += 5000) {
      const chunk = rows.slice(at, at + 5000);
      const found = await this.sql.rows(
        prepared(`WITH value_input AS (
           SELECT (r->>0)::bigint AS card_id, (r->>1)::bigint AS attribute_id, r->2 AS value, ord
             FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(r, ord)),
         ${scalarUpsertItems('$2')},
         recorded AS (${recordSql})
         SELECT card_id, attribute_id, before::text AS before FROM values_changed ORDER BY ord`),
        [JSON.stringify(chunk.map((r) => [r.cardId, r.attributeId, r.value])), userId],
      );
      for (const r of found) {
        changed.push({ cardId: n(r.card_id), attributeId: n(r.attribute_id), before: r.before === null ? null : (JSON.parse(String(r.before)) as unknown) });
      }
    }
    return changed;
  }

  async setScalar(cardId: number, attributeId: number, value: unknown): Promise<void> {
    if (value === null) {
      await this.sql.run(`DELETE FROM fields.scalar_values WHERE card_id = $1 AND attribute_id = $2`, [cardId, attributeId]);
      return;
    }
    await this.sql.run(
      `INSERT INTO fields.scalar_values (card_id, attribute_id, value) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (card_id, attribute_id) DO UPDATE SET value = EXCLUDED.value`,
      [cardId, attributeId, JSON.stringify(value)],
    );
  }

  /** Replaces the list with `refs` in that order. */
  async replaceList(kind: ListTable, cardId: number, attributeId: number, refs: number[]): Promise<void> {
    const { table, column } = LIST_TABLES[kind];
    await this.sql.run(`DELETE FROM ${table} WHERE card_id = $1 AND attribute_id = $2`, [cardId, attributeId]);
    if (!refs.length) return;
    await this.sql.run(
      `INSERT INTO ${table} (card_id, attribute_id, ${column}, position)
       SELECT $1, $2, ref, ord - 1 FROM unnest($3::bigint[]) WITH ORDINALITY AS t(ref, ord)`,
      [cardId, attributeId, refs],
    );
  }

  /**
   * `replaceList` for many (card, field) lists at once (an import's batch),
   * one statement per chunk: entries no longer in their list are deleted,
   * the others inserted or moved to their place. The two touch different
   * rows, so one statement can do both. A (card, field) pair may appear
   * once per call.
   */
  async replaceLists(kind: ListTable, lists: Array<{ cardId: number; attributeId: number; refs: number[] }>): Promise<void> {
    const { table, column } = LIST_TABLES[kind];
    for (let at = 0; at < lists.length; at += 1000) {
      const chunk = lists.slice(at, at + 1000);
      await this.sql.run(
        `WITH lists AS (
           SELECT (l->>0)::bigint AS card_id, (l->>1)::bigint AS attribute_id, l->2 AS refs
             FROM jsonb_array_elements($1::jsonb) AS l),
         entries AS (
           SELECT card_id, attribute_id, ref::bigint AS ref, (ord - 1)::int AS position
             FROM lists, jsonb_array_elements_text(refs) WITH ORDINALITY AS e(ref, ord)),
         removed AS (
           DELETE FROM ${table} t USING lists l
            WHERE t.card_id = l.card_id AND t.attribute_id = l.attribute_id
              AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.card_id = t.card_id AND e.attribute_id = t.attribute_id AND e.ref = t.${column}))
         INSERT INTO ${table} (card_id, attribute_id, ${column}, position)
         SELECT card_id, attribute_id, ref, position FROM entries
         ON CONFLICT (card_id, attribute_id, ${column}) DO UPDATE SET position = EXCLUDED.position
          WHERE ${table}.position IS DISTINCT FROM EXCLUDED.position`,
        [JSON.stringify(chunk.map((l) => [l.cardId, l.attributeId, l.refs]))],
      );
    }
  }

  /** `setVote` of one user on many (card, field) pairs at once, one statement per chunk; a vote of 0 removes the user's vote. */
  async setVotes(votes: Array<{ cardId: number; attributeId: number; vote: number }>, userId: number): Promise<void> {
    for (let at = 0; at < votes.length; at += 5000) {
      const chunk = votes.slice(at, at + 5000);
      await this.sql.run(
        `WITH input AS (
           SELECT (v->>0)::bigint AS card_id, (v->>1)::bigint AS attribute_id, (v->>2)::int AS vote
             FROM jsonb_array_elements($1::jsonb) AS v),
         removed AS (
           DELETE FROM fields.like_votes l USING input i
            WHERE l.card_id = i.card_id AND l.attribute_id = i.attribute_id AND l.user_id = $2 AND i.vote = 0)
         INSERT INTO fields.like_votes (card_id, attribute_id, user_id, vote)
         SELECT card_id, attribute_id, $2, vote FROM input WHERE vote <> 0
         ON CONFLICT (card_id, attribute_id, user_id) DO UPDATE SET vote = EXCLUDED.vote`,
        [JSON.stringify(chunk.map((v) => [v.cardId, v.attributeId, v.vote])), userId],
      );
    }
  }

  /** Adds `ref` last; false when it was already in the list. */
  async appendToList(kind: ListTable, cardId: number, attributeId: number, ref: number): Promise<boolean> {
    const { table, column } = LIST_TABLES[kind];
    const rows = await this.sql.rows(
      `INSERT INTO ${table} (card_id, attribute_id, ${column}, position)
       SELECT $1, $2, $3, coalesce(max(position) + 1, 0) FROM ${table} WHERE card_id = $1 AND attribute_id = $2
       ON CONFLICT DO NOTHING RETURNING ${column}`,
      [cardId, attributeId, ref],
    );
    return rows.length > 0;
  }

  /** Removes `ref` (or the last entry when undefined); returns what was removed. */
  async removeFromList(kind: ListTable, cardId: number, attributeId: number, ref?: number): Promise<number | null> {
    const { table, column } = LIST_TABLES[kind];
    const rows =
      ref === undefined
        ? await this.sql.rows(
            `DELETE FROM ${table} WHERE (card_id, attribute_id, ${column}) IN (
               SELECT card_id, attribute_id, ${column} FROM ${table} WHERE card_id = $1 AND attribute_id = $2
                ORDER BY position DESC LIMIT 1)
             RETURNING ${column} AS ref`,
            [cardId, attributeId],
          )
        : await this.sql.rows(
            `DELETE FROM ${table} WHERE card_id = $1 AND attribute_id = $2 AND ${column} = $3 RETURNING ${column} AS ref`,
            [cardId, attributeId, ref],
          );
    return rows.length ? n(rows[0].ref) : null;
  }

  /** The user's vote; 0 removes it. */
  async setVote(cardId: number, attributeId: number, userId: number, vote: number): Promise<void> {
    if (vote === 0) {
      await this.sql.run(`DELETE FROM fields.like_votes WHERE card_id = $1 AND attribute_id = $2 AND user_id = $3`, [
        cardId,
        attributeId,
        userId,
      ]);
      return;
    }
    await this.sql.run(
      `INSERT INTO fields.like_votes (card_id, attribute_id, user_id, vote) VALUES ($1, $2, $3, $4)
       ON CONFLICT (card_id, attribute_id, user_id) DO UPDATE SET vote = EXCLUDED.vote`,
      [cardId, attributeId, userId, vote],
    );
  }

  async insertFile(f: NewStoredFile): Promise<StoredFileRow> {
    const rows = await this.sql.rows(
      `INSERT INTO fields.files (organization_id, project_id, card_id, attribute_id, position, name, size, mime_type, storage_key, created_by)
       SELECT $1, $2, $3, $4, coalesce(max(position) + 1, 0), $5, $6, $7, $8, $9
         FROM fields.files WHERE card_id = $3 AND attribute_id = $4
       RETURNING ${FILE_COLUMNS}`,
      [f.organizationId, f.projectId, f.cardId, f.attributeId, f.name, f.size, f.mimeType, f.storageKey, f.createdBy],
    );
    return toFile(rows[0]);
  }

  async findFile(id: number): Promise<StoredFileRow | null> {
    const rows = await this.sql.rows(`SELECT ${FILE_COLUMNS} FROM fields.files WHERE id = $1`, [id]);
    return rows[0] ? toFile(rows[0]) : null;
  }

  /** Removes every file of the field on the card; returns the removed rows (their blobs go after commit). */
  async deleteFiles(cardId: number, attributeId: number): Promise<StoredFileRow[]> {
    const rows = await this.sql.rows(
      `DELETE FROM fields.files WHERE card_id = $1 AND attribute_id = $2 RETURNING ${FILE_COLUMNS}`,
      [cardId, attributeId],
    );
    return rows.map(toFile);
  }

  /** Removes one file of the field (the last one when `fileId` is undefined). */
  async deleteFile(cardId: number, attributeId: number, fileId?: number): Promise<StoredFileRow | null> {
    const rows =
      fileId === undefined
        ? await this.sql.rows(
            `DELETE FROM fields.files WHERE id = (
               SELECT id FROM fields.files WHERE card_id = $1 AND attribute_id = $2 ORDER BY position DESC, id DESC LIMIT 1)
             RETURNING ${FILE_COLUMNS}`,
            [cardId, attributeId],
          )
        : await this.sql.rows(
            `DELETE FROM fields.files WHERE id = $3 AND card_id = $1 AND attribute_id = $2 RETURNING ${FILE_COLUMNS}`,
            [cardId, attributeId, fileId],
          );
    return rows[0] ? toFile(rows[0]) : null;
  }

  /** Stored keys whose rows are gone (noted by the files_release_blob trigger). */
  async releasedBlobs(limit: number): Promise<string[]> {
    const rows = await this.sql.rows(`SELECT storage_key FROM fields.released_blobs ORDER BY released_at LIMIT $1`, [limit]);
    return rows.map((r) => String(r.storage_key));
  }

  /** The first and the last stored file (by id), with their keys: what a start checks the store against. */
  async firstAndLastFiles(): Promise<Array<{ id: number; key: string }>> {
    const rows = await this.sql.rows(
      `(SELECT id, storage_key FROM fields.files ORDER BY id LIMIT 1) UNION (SELECT id, storage_key FROM fields.files ORDER BY id DESC LIMIT 1) ORDER BY id`,
      [],
    );
    return rows.map((r) => ({ id: Number(r.id), key: String(r.storage_key) }));
  }

  /** Those of `keys` that a committed file row names (`storage_key` is unique: one lookup per key). */
  async namedBlobs(keys: string[]): Promise<Set<string>> {
    if (!keys.length) return new Set();
    const rows = await this.sql.rows(`SELECT storage_key FROM fields.files WHERE storage_key = ANY($1::text[])`, [keys]);
    return new Set(rows.map((r) => String(r.storage_key)));
  }

  async forgetReleasedBlobs(keys: string[]): Promise<void> {
    await this.sql.run(`DELETE FROM fields.released_blobs WHERE storage_key = ANY($1::text[])`, [keys]);
  }

  /** Whether any card holds a value of the field. */
  async hasValues(field: FieldDefinition): Promise<boolean> {
    const table = VALUE_TABLES[fieldTypeHandler(field.type).storage];
    if (!table) return false;
    const rows = await this.sql.rows(`SELECT 1 FROM ${table} WHERE attribute_id = $1 LIMIT 1`, [field.id]);
    return rows.length > 0;
  }
}
