import { describe, expect, it } from '@jest/globals';
import { SqlParams, type FilterCardColumns } from '../../../shared/persistence/filter-sql.js';
import type { CardFilterApi } from '../../card-hierarchy/index.js';
import type { FieldFilterApi, FieldTerm } from '../../fields/index.js';
import type { GroupFilterApi, GroupTerm } from '../../grouping/index.js';
import { candidateSet, compileFilter, fromTermSets, groupTerms, type FilterSqlParts } from './filter.compiler.js';
import type { Condition } from './filter.condition.js';

const ROW: FilterCardColumns = { id: 'c.id', projectId: 'c.project_id', modelId: 'c.model_id' };

// Stand-ins for the modules' SQL: each part names its term and adds one parameter.
const cards = {
  predicate: (term: { kind: string }, params: SqlParams) => `card(${term.kind}, ${params.add(term.kind)})`,
} as unknown as CardFilterApi;
const fields = {
  predicate: (term: FieldTerm, _card: FilterCardColumns, params: SqlParams) => `field(${params.add(term.kind)})`,
  // A model's field depends on the card row: no set of ids.
  cardIds: (term: FieldTerm, params: SqlParams) =>
    'fields' in term && term.fields.some((f) => f.modelId !== null) ? null : `SELECT field_ids(${params.add(term.kind)})`,
} as unknown as FieldFilterApi;
const groups = {
  predicate: (ids: number[], _card: FilterCardColumns, params: SqlParams) => `group(${params.add(ids)})`,
  cardIds: (ids: number[], params: SqlParams) => `SELECT group_ids(${params.add(ids)})`,
} as unknown as GroupFilterApi;

const member = (modelId: number | null): Condition => ({ kind: 'field', term: { kind: 'member', fields: [{ id: 1, modelId }], userIds: [7] } });
const tag: GroupTerm = { kind: 'group', typeIds: null, match: 'equals', title: 'Tag' };

function compile(condition: Condition): { sql: string; values: unknown[] } {
  const terms = groupTerms(condition);
  const parts: FilterSqlParts = { cards, fields, groups, groupIds: new Map(terms.map((t) => [t, [40]])) };
  const params = new SqlParams();
  const sql = compileFilter(condition, parts)(ROW, params);
  return { sql, values: params.values };
}

describe('compileFilter', () => {
  it('turns an or of field and group terms into one set of card ids', () => {
    const { sql, values } = compile({ kind: 'or', items: [member(null), { kind: 'group', term: tag }] });
    expect(sql).toBe('c.id IN (SELECT field_ids($1) UNION ALL SELECT group_ids($2))');
    expect(values).toEqual(['member', [40]]);
  });

  it('keeps an or with a term on the card row as tests of each card, without the parameters of the abandoned set', () => {
    const { sql, values } = compile({ kind: 'or', items: [member(null), { kind: 'group', term: tag }, member(9)] });
    expect(sql).toBe('(field($1) OR group($2) OR field($3))');
    expect(values).toEqual(['member', [40], 'member']);
    const mixed = compile({ kind: 'not', item: { kind: 'or', items: [member(null), { kind: 'card', term: { kind: 'state', state: 'closed' } }] } });
    expect(mixed.sql).toBe('NOT ((field($1) OR card(state, $2)))');
    expect(mixed.values).toEqual(['member', 'state']);
  });

  it('unites nested ors, and leaves and/not to the card query', () => {
    const nested = compile({ kind: 'or', items: [{ kind: 'group', term: tag }, { kind: 'or', items: [member(null), member(null)] }] });
    expect(nested.sql).toBe('c.id IN (SELECT group_ids($1) UNION ALL SELECT field_ids($2) UNION ALL SELECT field_ids($3))');
    const and = compile({ kind: 'and', items: [member(null), { kind: 'not', item: { kind: 'group', term: tag } }] });
    expect(and.sql).toBe('(field($1) AND NOT (group($2)))');
  });

  it('leaves the planner at most four subquery tests to join, and checks the others on each card', () => {
    const state: Condition = { kind: 'card', term: { kind: 'state', state: 'closed' } };
    const parent: Condition = { kind: 'card', term: { kind: 'parent', ref: 3 } };
    const group: Condition = { kind: 'group', term: tag };
    const union: Condition = { kind: 'or', items: [member(null), group] };
    const four = compile({ kind: 'and', items: [member(null), { kind: 'not', item: group }, parent, state, union] });
    expect(four.sql).toBe('(field($1) AND NOT (group($2)) AND card(parent, $3) AND card(state, $4) AND c.id IN (SELECT field_ids($5) UNION ALL SELECT group_ids($6)))');
    // Nested ands are one list; an or of tests on the card row counts each (two here, the last that fit).
    const many = compile({
      kind: 'and',
      items: [
        { kind: 'and', items: [member(null), state, union] },
        { kind: 'or', items: [member(9), group] },
        group,
        { kind: 'not', item: { kind: 'or', items: [member(null), member(null)] } },
        member(9),
        state,
      ],
    });
    expect(many.sql).toBe(
      '(field($1) AND card(state, $2) AND c.id IN (SELECT field_ids($3) UNION ALL SELECT group_ids($4))' +
        ' AND (field($5) OR group($6)) AND (SELECT group($7)) AND (SELECT NOT (c.id IN (SELECT field_ids($8) UNION ALL SELECT field_ids($9))))' +
        ' AND (SELECT field($10)) AND card(state, $11))',
    );
    expect(many.values).toEqual(['member', 'state', 'member', [40], 'member', [40], [40], 'member', 'member', 'member', 'state']);
    const lone = compile({ kind: 'not', item: { kind: 'or', items: [member(9), member(9), member(9), member(9), member(9)] } });
    expect(lone.sql).toBe('(SELECT NOT ((field($1) OR field($2) OR field($3) OR field($4) OR field($5))))');
  });

  it('writes the union of a long or as groups of 50 sets, not as a chain of hundreds', () => {
    const or = (n: number): Condition => ({ kind: 'or', items: Array.from({ length: n }, () => member(null)) });
    const sets = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `SELECT field_ids($${from + i})`).join(' UNION ALL ');
    expect(compile(or(50)).sql).toBe(`c.id IN (${sets(1, 50)})`);
    const long = compile({ kind: 'or', items: [or(60), or(60)] });
    expect(long.sql).toBe(`c.id IN ((${sets(1, 50)}) UNION ALL (${sets(51, 100)}) UNION ALL (${sets(101, 120)}))`);
    expect(long.values).toHaveLength(120);
    const huge = compile(or(2600)).sql;
    expect(huge.startsWith(`c.id IN (((${sets(1, 50)}) UNION ALL (`)).toBe(true);
    expect(huge.match(/UNION ALL/g)).toHaveLength(2599);
  });

  it('refuses a group term whose groups were not looked up', () => {
    const parts: FilterSqlParts = { cards, fields, groups, groupIds: new Map() };
    expect(() => compileFilter({ kind: 'group', term: tag }, parts)(ROW, new SqlParams())).toThrow(/not looked up/);
  });
});

describe('fromTermSets', () => {
  const state: Condition = { kind: 'card', term: { kind: 'state', state: 'closed' } };
  const likes: Condition = { kind: 'field', term: { kind: 'likes', fields: [{ id: 2, modelId: null }], op: '>', value: 1 } };

  it('says a condition of field and group terms only is found from their indexes', () => {
    expect(fromTermSets(member(null))).toBe(true);
    expect(fromTermSets({ kind: 'group', term: tag })).toBe(true);
    expect(fromTermSets({ kind: 'or', items: [member(null), { kind: 'group', term: tag }] })).toBe(true);
    expect(fromTermSets({ kind: 'and', items: [member(null), { kind: 'and', items: [{ kind: 'group', term: tag }] }] })).toBe(true);
  });

  it('says no for card terms, not, a likes score and anything with one', () => {
    for (const c of [state, likes, { kind: 'all' }, { kind: 'none' }, { kind: 'not', item: member(null) }] as Condition[]) {
      expect(fromTermSets(c)).toBe(false);
    }
    expect(fromTermSets({ kind: 'and', items: [member(null), state] })).toBe(false);
    expect(fromTermSets({ kind: 'or', items: [member(null), { kind: 'not', item: { kind: 'group', term: tag } }] })).toBe(false);
  });
});

describe('candidateSet', () => {
  const state: Condition = { kind: 'card', term: { kind: 'state', state: 'closed' } };
  const candidates = (condition: Condition) => {
    const terms = groupTerms(condition);
    const set = candidateSet(condition, { cards, fields, groups, groupIds: new Map(terms.map((t) => [t, [40]])) });
    if (!set) return undefined;
    const params = new SqlParams();
    return { sql: set.sql(params), values: params.values, exact: set.exact, union: set.union };
  };

  it('is exactly the matches for a field or group term, or an or of them (a union)', () => {
    expect(candidates(member(null))).toEqual({ sql: 'SELECT field_ids($1)', values: ['member'], exact: true, union: false });
    expect(candidates({ kind: 'or', items: [member(null), { kind: 'group', term: tag }] })).toEqual({
      sql: 'SELECT field_ids($1) UNION ALL SELECT group_ids($2)',
      values: ['member', [40]],
      exact: true,
      union: true,
    });
  });

  it('is, for an and, the set of its first item that has one: more than the matches', () => {
    expect(candidates({ kind: 'and', items: [state, { kind: 'group', term: tag }, member(null)] })).toEqual({
      sql: 'SELECT group_ids($1)',
      values: [[40]],
      exact: false,
      union: false,
    });
  });

  it('is none for card terms, not, a model’s field, and ands or ors of those', () => {
    for (const c of [state, member(9), { kind: 'not', item: member(null) }, { kind: 'all' }] as Condition[]) expect(candidates(c)).toBeUndefined();
    expect(candidates({ kind: 'and', items: [state, member(9)] })).toBeUndefined();
    expect(candidates({ kind: 'or', items: [member(null), state] })).toBeUndefined();
  });
});
