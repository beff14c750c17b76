import type { FilterCardColumns, FilterOrderOp, FilterTextMatch, SqlParams } from '../../../shared/persistence/filter-sql.js';
import type { CardState } from './card-hierarchy.api.js';

/** A filter term about the card row itself (docs/FILTERS.md). */
export type CardTerm =
  | { kind: 'title'; match: FilterTextMatch; text: string }
  | { kind: 'ref' | 'hlevel'; op: FilterOrderOp; value: number }
  | { kind: 'state'; state: CardState }
  /** Archived, or under an archived card (the cards a listing hides). */
  | { kind: 'archived'; archived: boolean }
  /** The parent's ref (0: the top-level card) in the card's own project. */
  | { kind: 'parent'; ref: number }
  /** The timestamp compared with a span of time (a UTC day, or an instant at the precision it was written). */
  | { kind: 'created' | 'updated'; op: FilterOrderOp; span: TimeSpan }
  | { kind: 'model'; modelIds: number[] };

/**
 * The span of time a filter value names, `[start, end)`: instants as
 * PostgreSQL reads them (ISO 8601 UTC, microseconds), `end` `infinity` when
 * the span reaches past 9999. A timestamp `= span` lies within it, `< span`
 * before it begins, `> span` after it ends (docs/FILTERS.md).
 */
export interface TimeSpan {
  start: string;
  end: string;
}

export interface FilterScope {
  projectIds: number[];
  /** Include archived cards and cards under them. */
  withArchived: boolean;
}

/** Builds the WHERE condition of the filter query from the card columns. */
export type FilterCondition = (card: FilterCardColumns, params: SqlParams) => string;

/**
 * A set of card ids (`SELECT card_id …`) that holds every card the condition
 * selects: exactly those (`exact`), or more. Its ids are of cards of the
 * scope's projects only: the terms' values and memberships belong to fields
 * and groups of those projects, which exist only on their own project's
 * cards. A query over several projects starts from it when it is small; the
 * count of an exact set reads the card table only for the cards the listing
 * leaves out.
 */
export interface CandidateSet {
  sql: (params: SqlParams) => string;
  /** Exactly the matches; an `or`'s set may still hold an id more than once. */
  exact: boolean;
  /**
   * The sets of several terms (an `or`), one after another: the planner
   * cannot tell how many distinct ids such a union holds.
   */
  union: boolean;
}

/** Where a page of an id-ordered listing starts: after a keyset id (a cursor), or at an offset. */
export type PageStart = { after: number } | { offset: number };

/**
 * The card-hierarchy part of the filter language: the SQL of its own terms,
 * and the filter query over its table, into which the composition layer puts
 * a condition assembled from every module's terms.
 */
export abstract class CardFilterApi {
  /** A boolean SQL expression (never NULL) for `term` on the row of the filter query. */
  abstract predicate(term: CardTerm, params: SqlParams): string;
  /** A subquery of the ids of the cards with that ref in the project of the filter query's row. */
  abstract cardsWithRef(ref: number, params: SqlParams): string;
  /**
   * One page of matching cards (not the top-level ones), in id order, at an
   * offset or after a keyset id: one query, or two over several projects
   * when `candidates` is given (its size decides where the query starts).
   */
  abstract pageIds(scope: FilterScope, where: FilterCondition, limit: number, from: PageStart, candidates?: CandidateSet): Promise<number[]>;
  /**
   * How many cards match: one query. `fromTermSets`: the condition is found
   * from its terms' own indexes (a few thousand card ids, each then checked
   * against the listing index), so the count runs without parallel workers,
   * which only slow such a count down (docs/PERFORMANCE.md "Filters").
   * `candidates` that are exactly the matches, a union and not too many are
   * counted from a sorted array of their ids (two queries).
   */
  abstract count(scope: FilterScope, where: FilterCondition, fromTermSets?: boolean, candidates?: CandidateSet): Promise<number>;
}
