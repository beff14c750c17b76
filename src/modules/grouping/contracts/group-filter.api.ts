import type { FilterCardColumns, FilterTextMatch, SqlParams } from '../../../shared/persistence/filter-sql.js';

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
  /**
   * The ids of the groups each term names in the projects (in the order of
   * `terms`): one query for all of them. The filter query then names the
   * groups by id, so the planner estimates and indexes memberships by group.
   */
  abstract groupIds(projectIds: number[], terms: GroupTerm[]): Promise<number[][]>;
  /** A boolean SQL expression (never NULL): the card named by `card` is in one of the groups. */
  abstract predicate(groupIds: number[], card: FilterCardColumns, params: SqlParams): string;
  /** An uncorrelated `SELECT card_id …` of the cards in one of the groups. */
  abstract cardIds(groupIds: number[], params: SqlParams): string;
}
