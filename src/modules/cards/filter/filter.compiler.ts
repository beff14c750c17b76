import { SqlParams, type FilterCardColumns } from '../../../shared/persistence/filter-sql.js';
import type { CandidateSet, CardFilterApi, FilterCondition } from '../../card-hierarchy/index.js';
import type { FieldFilterApi } from '../../fields/index.js';
import type { GroupFilterApi, GroupTerm } from '../../grouping/index.js';
import type { Condition } from './filter.condition.js';

/** The modules that write the SQL of their own terms. */
export interface FilterSqlParts {
  cards: CardFilterApi;
  fields: FieldFilterApi;
  groups: GroupFilterApi;
  /** The ids of the groups each group term of the condition names (`groupTerms`, then `GroupFilterApi.groupIds`). */
  groupIds: Map<GroupTerm, number[]>;
}

/** The group terms of a condition, each once, to look their groups up in one query. */
export function groupTerms(condition: Condition): GroupTerm[] {
  switch (condition.kind) {
    case 'and':
    case 'or':
      return condition.items.flatMap(groupTerms);
    case 'not':
      return groupTerms(condition.item);
    case 'group':
      return [condition.term];
    default:
      return [];
  }
}

/**
 * Whether the cards a condition selects are found from its terms' own
 * indexes (field values, group memberships), each then checked against the
 * card table: such a term, or an `and`/`or` of them only. Card terms, `not`
 * and a likes score may be tested on every card of the projects (a scan
 * that parallel workers do speed up), and so may a condition with one.
 */
export function fromTermSets(c: Condition): boolean {
  switch (c.kind) {
    case 'or':
    case 'and':
      return c.items.length > 0 && c.items.every(fromTermSets);
    case 'group':
      return true;
    case 'field':
      return c.term.kind !== 'likes';
    default:
      return false;
  }
}

/**
 * How many of a filter's subquery tests (a field or group term's EXISTS, a
 * parent's, an `or`'s set of ids) the planner may turn into joins. It plans
 * every order of the joins it is given: the planning time roughly doubles
 * with each one (5 took 90 ms, 8 took 600 ms, 16 took 3 s and 64 took
 * minutes on 100 000 cards, for a filter of 300 characters); the tests past
 * these are checked on each card the joins leave, as a subquery of their
 * own (planned in a few ms whatever their number). No filter of the
 * benchmarks has more than two. A constant object: tests lower it.
 */
export const FILTER_JOIN_LIMITS = { joinedTests: 4 };

/**
 * Compiles a resolved filter into the WHERE condition of card-hierarchy's
 * filter query: `and`/`or`/`not` here, each leaf by the module that owns its
 * data. Every predicate is a boolean that is never NULL, so `not` is the
 * exact complement (`!=` includes cards where the field is unset). Past
 * `FILTER_JOIN_LIMITS.joinedTests` subquery tests, the filter's further
 * `and`ed items are each written as a scalar `(SELECT …)`, which the planner
 * does not turn into joins.
 */
export function compileFilter(condition: Condition, parts: FilterSqlParts): FilterCondition {
  return (card, params) => {
    if (subqueryTests(condition, parts) <= FILTER_JOIN_LIMITS.joinedTests) return toSql(condition, parts, card, params);
    let joinable = FILTER_JOIN_LIMITS.joinedTests;
    const items = conjuncts(condition).map((item) => {
      const tests = subqueryTests(item, parts);
      const sql = toSql(item, parts, card, params);
      if (tests <= joinable) {
        joinable -= tests;
        return sql;
      }
      return `(SELECT ${sql})`;
    });
    return items.length === 1 ? items[0] : `(${items.join(' AND ')})`;
  };
}

/** The items of nested `and`s, in order. */
function conjuncts(c: Condition): Condition[] {
  return c.kind === 'and' ? c.items.flatMap(conjuncts) : [c];
}

/**
 * At most how many subqueries the planner could turn into joins in a
 * condition's SQL (an `or` of tests is not joined, but is counted: wrapped, it
 * is checked on each card as it already was).
 */
function subqueryTests(c: Condition, parts: FilterSqlParts): number {
  switch (c.kind) {
    case 'all':
    case 'none':
      return 0;
    case 'card':
      return c.term.kind === 'parent' || c.term.kind === 'hlevel' ? 1 : 0;
    case 'field':
    case 'group':
      return 1;
    case 'not':
      return subqueryTests(c.item, parts);
    case 'or':
      if (hasCandidates(c, parts)) return 1;
      return c.items.reduce((n, item) => n + subqueryTests(item, parts), 0);
    case 'and':
      return c.items.reduce((n, item) => n + subqueryTests(item, parts), 0);
  }
}

function toSql(c: Condition, parts: FilterSqlParts, card: FilterCardColumns, params: SqlParams): string {
  switch (c.kind) {
    case 'all':
      return 'true';
    case 'none':
      return 'false';
    case 'or': {
      const union = cardSet(c, parts, params);
      if (union !== null) return `${card.id} IN (${union})`;
      return `(${c.items.map((item) => toSql(item, parts, card, params)).join(' OR ')})`;
    }
    case 'and':
      return `(${c.items.map((item) => toSql(item, parts, card, params)).join(' AND ')})`;
    case 'not':
      return `NOT (${toSql(c.item, parts, card, params)})`;
    case 'card':
      return parts.cards.predicate(c.term, params);
    case 'group':
      return parts.groups.predicate(groupIdsOf(c.term, parts), card, params);
    case 'field':
      if (c.term.kind === 'relationship') {
        const targets = parts.cards.cardsWithRef(c.term.ref, params);
        return parts.fields.predicate({ kind: 'relationship', fields: c.term.fields, targets }, card, params);
      }
      return parts.fields.predicate(c.term, card, params);
  }
}

/**
 * A set of card ids that holds every card the condition selects, from the
 * terms' own indexes (field values, group memberships): a term's own set or
 * an `or` of such sets (exactly the matches), or for an `and` the set of its
 * first item that has one (more than the matches).
 * Undefined when the condition has none (a card term, a `not`, a likes
 * score, …). A search over many projects starts from it when it is small.
 */
export function candidateSet(condition: Condition, parts: FilterSqlParts): CandidateSet | undefined {
  const source = condition.kind === 'and' ? condition.items.find((item) => hasCandidates(item, parts)) : condition;
  if (!source || !hasCandidates(source, parts)) return undefined;
  return { sql: (params) => cardSet(source, parts, params)!, exact: source === condition, union: source.kind === 'or' && source.items.length > 1 };
}

function hasCandidates(c: Condition, parts: FilterSqlParts): boolean {
  return cardSet(c, parts, new SqlParams()) !== null;
}

/**
 * An `or` of terms about fields and groups as one uncorrelated set of card
 * ids (a UNION of each term's `SELECT card_id`), which the planner can start
 * from, reading each term's values by its index, instead of testing every
 * card of the projects against each term. Null, with `params` as they were,
 * when a term depends on the card row (a card term, a model's field, …).
 */
function cardSet(c: Condition, parts: FilterSqlParts, params: SqlParams): string | null {
  const sets = termSets(c, parts, params);
  return sets && unionAll(sets);
}

/** The `SELECT card_id` of each term of an `or` (nested ones included), or null (see `cardSet`). */
function termSets(c: Condition, parts: FilterSqlParts, params: SqlParams): string[] | null {
  switch (c.kind) {
    case 'or': {
      const mark = params.values.length;
      const sets: string[] = [];
      for (const item of c.items) {
        const set = termSets(item, parts, params);
        if (set === null) {
          params.truncate(mark);
          return null;
        }
        sets.push(...set);
      }
      return sets;
    }
    case 'group':
      return [parts.groups.cardIds(groupIdsOf(c.term, parts), params)];
    case 'field': {
      const set = c.term.kind === 'relationship' ? null : parts.fields.cardIds(c.term, params);
      return set === null ? null : [set];
    }
    default:
      return null;
  }
}

/**
 * Sets joined by UNION ALL, in parenthesised groups of at most
 * `UNION_WIDTH`, and groups of those: the database nests a chain of them one
 * level deeper per set, and a chain of 600 (`#b or #b or …`, a filter of
 * 3 600 characters) passed the embedded database's stack (a 500). The
 * planner appends them all alike.
 */
function unionAll(sets: string[]): string {
  if (sets.length <= UNION_WIDTH) return sets.join(' UNION ALL ');
  const groups: string[] = [];
  for (let i = 0; i < sets.length; i += UNION_WIDTH) groups.push(`(${sets.slice(i, i + UNION_WIDTH).join(' UNION ALL ')})`);
  return unionAll(groups);
}

const UNION_WIDTH = 50;

function groupIdsOf(term: GroupTerm, parts: FilterSqlParts): number[] {
  const groupIds = parts.groupIds.get(term);
  if (!groupIds) throw new Error('compileFilter: a group term whose groups were not looked up');
  return groupIds;
}
