import type { FilterCardColumns, FilterOrderOp, FilterTextMatch, SqlParams } from '../../../shared/persistence/filter-sql.js';
import type { FieldType } from '../domain/values/field-value.types.js';

/** A field as the filter language sees it (project fields and model fields). */
export interface FilterField {
  id: number;
  projectId: number;
  /** Set for a model's field: only cards of that model use it. */
  modelId: number | null;
  name: string;
  type: FieldType;
  options: { time?: boolean; period?: boolean };
  /** The group type a `group_type` field shows. */
  groupTypeId: number | null;
}

export interface FilterModel {
  id: number;
  projectId: number;
  name: string;
}

/** What a filter may name in a set of projects. */
export interface FilterSchema {
  fields: FilterField[];
  models: FilterModel[];
}

/** A field a term tests; `modelId` as in FilterField. */
export interface FilterFieldRef {
  id: number;
  modelId: number | null;
}

/**
 * A filter term about field values. `fields` are the fields the name
 * resolved to (one per project at most, for a given type); a card matches
 * only through a field it uses (a model field needs the card's model).
 */
export type FieldTerm =
  | { kind: 'text'; fields: FilterFieldRef[]; match: FilterTextMatch; text: string }
  | { kind: 'number'; fields: FilterFieldRef[]; op: FilterOrderOp; value: number }
  | { kind: 'bool'; fields: FilterFieldRef[]; value: boolean }
  /** A date field without `period`: the value's day compared with `day` (YYYY-MM-DD). */
  | { kind: 'date'; fields: FilterFieldRef[]; op: FilterOrderOp; day: string }
  /** A `period` date field: `=` the period covers the day, `<` it ends before, `>` it starts after. */
  | { kind: 'period'; fields: FilterFieldRef[]; op: FilterOrderOp; day: string }
  | { kind: 'time'; fields: FilterFieldRef[]; op: FilterOrderOp; time: string }
  /** One of `userIds` is in the field (`@user`: every members field of the projects). */
  | { kind: 'member'; fields: FilterFieldRef[]; userIds: number[] }
  /** The field links to one of the cards that `targets` (a subquery of card ids) selects. */
  | { kind: 'relationship'; fields: FilterFieldRef[]; targets: string }
  /** The likes score (sum of votes; 0 without votes). */
  | { kind: 'likes'; fields: FilterFieldRef[]; op: FilterOrderOp; value: number }
  /** One of `userIds` liked the card (voted +1). */
  | { kind: 'liked'; fields: FilterFieldRef[]; userIds: number[] }
  /** A file of the field has that name. */
  | { kind: 'file'; fields: FilterFieldRef[]; match: FilterTextMatch; text: string };

/** The fields part of the filter language. */
export abstract class FieldFilterApi {
  /** The fields and models of the projects. */
  abstract schema(projectIds: number[]): Promise<FilterSchema>;
  /** A boolean SQL expression (never NULL) for `term` on the card named by `card`: an EXISTS over fields' tables. */
  abstract predicate(term: FieldTerm, card: FilterCardColumns, params: SqlParams): string;
  /**
   * The same test as an uncorrelated `SELECT card_id …` of the cards for
   * which it holds (any project), so a query can start from the values (the
   * filter unites the terms of an `or` this way); null, adding no parameter,
   * when the term depends on the card row (a model's field, a likes score, a
   * relationship).
   */
  abstract cardIds(term: FieldTerm, params: SqlParams): string | null;
}
