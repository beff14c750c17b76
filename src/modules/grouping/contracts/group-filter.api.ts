import type { FilterCardColumns, FilterTextMatch, SqlParams } from '../../../shared/persistence/sql-params.js';

/**
 * The card is in a group whose title matches (ignoring case): of any type
 * (`#group`) or of the given types (a `group_type` field compared).
 */
export interface GroupTerm {
  kind: 'group';
  typeIds: number[] | null;
  match: FilterTextMatch;
  title: string;
}

/** The grouping part of the filter language. */
export abstract class GroupFilterApi {
  /** A boolean SQL expression (never NULL) for `term` on the card named by `card`: an EXISTS over memberships. */
  abstract predicate(term: GroupTerm, card: FilterCardColumns, params: SqlParams): string;
}
