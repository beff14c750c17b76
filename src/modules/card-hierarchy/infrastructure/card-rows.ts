import { toId, toIdOrNull, toIds } from '../../../shared/persistence/sql.js';
import type { CardJsonRow, CardRecord, CardState } from '../contracts/card-hierarchy.api.js';

/** A card row as read for views and tree work. */
export interface CardRow extends CardRecord {
  /** Archived, or under an archived card: left out of listings. */
  hidden: boolean;
}

export const CARD_COLUMNS = `id, project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, state,
  is_archived, hidden, position, model_id, created_at, updated_at`;

export interface RawCard {
  id: number | string;
  project_id: number | string;
  organization_id: number | string;
  parent_id: number | string | null;
  ancestor_ids: (number | string)[] | string;
  depth: number;
  ref: number;
  title: string;
  state: CardState;
  is_archived: boolean;
  hidden: boolean;
  position: number;
  model_id: number | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export function toRow(r: RawCard): CardRow {
  return {
    id: toId(r.id),
    projectId: toId(r.project_id),
    organizationId: toId(r.organization_id),
    parentId: toIdOrNull(r.parent_id),
    ancestorIds: toIds(r.ancestor_ids),
    depth: Number(r.depth),
    ref: Number(r.ref),
    title: r.title,
    state: r.state,
    isArchived: r.is_archived,
    hidden: r.hidden,
    position: Number(r.position),
    modelId: toIdOrNull(r.model_id),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

/** A timestamp as `Date.toISOString` writes it: UTC, milliseconds (truncated, as the row parser truncates them). */
function isoSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * The card's own members of the card JSON (DESIGN.md §4), as JSON text built
 * by the database over the row aliased `c`: `{"id":…,"ref":…,"project_id":…,
 * "parent_id":…,"title":…,"state":…,"is_archived":…,"position":…,"depth":…,
 * "model_id":…,"created_at":…,"updated_at":…}`. Listings send it on as it
 * is, so a page costs the server neither parsing the rows into objects nor
 * serialising them again (docs/PERFORMANCE.md, issue 15, fifth pass). The
 * members and values are those the cards module's `toView` writes for a
 * CardRecord; an e2e test compares the two. Strings go through `to_json`
 * (escaped); the rest are numbers, booleans and null as PostgreSQL prints them.
 */
function cardJsonSql(c: string): string {
  return `'{"id":' || ${c}.id || ',"ref":' || ${c}.ref || ',"project_id":' || ${c}.project_id
       || ',"parent_id":' || coalesce(${c}.parent_id::text, 'null') || ',"title":' || to_json(${c}.title)::text
       || ',"state":' || to_json(${c}.state)::text || ',"is_archived":' || ${c}.is_archived
       || ',"position":' || ${c}.position || ',"depth":' || ${c}.depth
       || ',"model_id":' || coalesce(${c}.model_id::text, 'null')
       || ',"created_at":"' || ${isoSql(`${c}.created_at`)} || '","updated_at":"' || ${isoSql(`${c}.updated_at`)} || '"}'`;
}

/** The columns of a `CardJsonRow`, over the row aliased `c`. */
export function cardJsonColumns(c: string): string {
  return `${c}.id, ${c}.project_id, ${c}.model_id, ${cardJsonSql(c)} AS json`;
}

export interface RawCardJson {
  id: number | string;
  project_id: number | string;
  model_id: number | string | null;
  json: string;
}

export function toJsonRow(r: RawCardJson): CardJsonRow {
  return { id: toId(r.id), projectId: toId(r.project_id), modelId: toIdOrNull(r.model_id), json: r.json };
}

/**
 * Other modules' reads (`extras`: SQL by name, STYLE.md §2.6) as the columns
 * `x0`, `x1`, … of a SELECT list (`, <sql> AS x0, …`). With `firstRowOf`
 * (an ORDER BY expression), reads that do not depend on the rows are sent on
 * the first row in that order only, not repeated on every row of a page.
 */
export function extraColumnsSql(extras: Record<string, string>, firstRowOf?: string): string {
  return Object.values(extras)
    .map((sql, i) => (firstRowOf ? `, CASE WHEN row_number() OVER (ORDER BY ${firstRowOf}) = 1 THEN ${sql} END AS x${i}` : `, ${sql} AS x${i}`))
    .join('');
}

/** What `extraColumnsSql` read, by name, from a row (the first, with `firstRowOf`). */
export function extrasRead(extras: Record<string, string>, row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(extras).map((name, i) => [name, row[`x${i}`]]));
}
