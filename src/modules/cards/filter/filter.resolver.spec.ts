import { describe, expect, it } from '@jest/globals';
import type { FilterField, FilterSchema } from '../../fields/index.js';
import type { Condition } from './filter.condition.js';
import { FilterError } from './filter.errors.js';
import { parseFilter } from './filter.parser.js';
import { mentionsArchived, needsSchema, resolveFilter, userMap, userRefs, type ResolveContext } from './filter.resolver.js';
import { dayValue } from './filter-values.js';

const field = (id: number, name: string, type: FilterField['type'], extra: Partial<FilterField> = {}): FilterField => ({
  id,
  projectId: 1,
  modelId: null,
  name,
  type,
  options: {},
  groupTypeId: null,
  ...extra,
});

const schema: FilterSchema = {
  fields: [
    field(1, 'Estimate', 'number'),
    field(2, 'Due date', 'date'),
    field(3, 'Sprint', 'date', { options: { period: true } }),
    field(4, 'Owners', 'members'),
    field(5, 'Status', 'group_type', { groupTypeId: 50 }),
    field(6, 'Severity', 'text', { modelId: 9 }),
    field(7, 'Estimate', 'text', { projectId: 2 }),
    field(8, 'Likes', 'likes'),
  ],
  models: [{ id: 9, projectId: 1, name: 'Bug' }],
};

const users = [
  { id: 10, username: 'alice', displayName: 'Alice Smith' },
  { id: 11, username: 'bob', displayName: 'alice' },
];

function resolve(text: string): Condition {
  const expr = parseFilter(text);
  const ctx: ResolveContext = { schema, meId: 42, today: '2026-01-31', users: userMap(userRefs(expr), users) };
  return resolveFilter(expr, ctx);
}

function errorOf(text: string): FilterError {
  try {
    resolve(text);
  } catch (e) {
    if (e instanceof FilterError) return e;
    throw e;
  }
  throw new Error(`"${text}" resolved without error`);
}

describe('resolveFilter', () => {
  it('reports the error of the field defined first when no type of a name reads the value, whatever order the schema came in', () => {
    // "Doing in Body": a members field refuses the value (a user expected, at 0), a text field refuses "in" (at 9).
    const body = [field(20, 'Body', 'members'), field(21, 'Body', 'text', { projectId: 2 })];
    const positionWith = (fields: FilterField[]) => {
      const expr = parseFilter('Doing in Body');
      try {
        resolveFilter(expr, { schema: { fields, models: [] }, meId: 42, today: '2026-01-31', users: new Map() });
      } catch (e) {
        if (e instanceof FilterError) return e.position;
        throw e;
      }
      throw new Error('resolved without error');
    };
    expect(positionWith(body)).toBe(0);
    expect(positionWith([...body].reverse())).toBe(0);
  });

  it('turns != into the complement of =', () => {
    expect(resolve('state != closed')).toEqual({ kind: 'not', item: { kind: 'card', term: { kind: 'state', state: 'closed' } } });
  });

  it('reads values by the type of the field, in any case of its name; types that cannot compare are left out', () => {
    // Estimate is a number in project 1 and a text in project 2: text has no >=.
    expect(resolve('estimate >= 2.5')).toEqual({
      kind: 'field',
      term: { kind: 'number', fields: [{ id: 1, modelId: null }], op: '>=', value: 2.5 },
    });
    expect(resolve('Estimate = 3')).toEqual({
      kind: 'or',
      items: [
        { kind: 'field', term: { kind: 'number', fields: [{ id: 1, modelId: null }], op: '=', value: 3 } },
        { kind: 'field', term: { kind: 'text', fields: [{ id: 7, modelId: null }], match: 'equals', text: '3' } },
      ],
    });
  });

  it('names, in each project, the fields and models lower() folds as the name before those only foldCase does (ΟΔΟΣ beside οδος)', () => {
    // Project 1 holds ΟΔΟΣ and οδος (two names to the unique index); project 2 only ΟΔΟΣ; project 3 only οδος.
    const greek: FilterSchema = {
      fields: [
        field(30, 'ΟΔΟΣ', 'text'),
        field(31, 'οδος', 'text'),
        field(32, 'ΟΔΟΣ', 'text', { projectId: 2 }),
        field(33, 'οδος', 'text', { projectId: 3 }),
      ],
      models: [
        { id: 40, projectId: 1, name: 'οδοσ' },
        { id: 41, projectId: 1, name: 'οδος' },
        { id: 42, projectId: 2, name: 'οδος' },
      ],
    };
    const resolveIn = (text: string) => resolveFilter(parseFilter(text), { schema: greek, meId: 42, today: '2026-01-31', users: new Map() });
    const idsOf = (text: string) => {
      const c = resolveIn(text);
      if (c.kind === 'field' && c.term.kind === 'text') return c.term.fields.map((f) => f.id);
      if (c.kind === 'card' && c.term.kind === 'model') return c.term.modelIds;
      throw new Error(`unexpected ${JSON.stringify(c)}`);
    };
    expect(idsOf('ΟΔΟΣ = y')).toEqual([30, 32, 33]);
    expect(idsOf('Οδοσ = y')).toEqual([30, 32, 33]);
    expect(idsOf('οδος = y')).toEqual([31, 32, 33]);
    expect(idsOf('model = ΟΔΟΣ')).toEqual([40, 42]);
    expect(idsOf('model = οδος')).toEqual([41, 42]);
  });

  it('resolves users, @me, groups, models and relative dates', () => {
    // @user: every members field of the projects, named by id.
    const owners = [{ id: 4, modelId: null }];
    expect(resolve('@alice')).toEqual({ kind: 'field', term: { kind: 'member', fields: owners, userIds: [10] } });
    expect(resolve('@{alice}')).toEqual({ kind: 'field', term: { kind: 'member', fields: owners, userIds: [10, 11] } });
    expect(resolve('@me in Owners')).toEqual({
      kind: 'field',
      term: { kind: 'member', fields: [{ id: 4, modelId: null }], userIds: [42] },
    });
    expect(resolve('@nobody')).toEqual({ kind: 'none' });
    expect(resolve('Status ~= do')).toEqual({ kind: 'group', term: { kind: 'group', typeIds: [50], match: 'contains', title: 'do' } });
    expect(resolve('model = bug')).toEqual({ kind: 'card', term: { kind: 'model', modelIds: [9] } });
    expect(resolve('model = Story')).toEqual({ kind: 'none' });
    expect(resolve('{Due date} < -1m')).toEqual({
      kind: 'field',
      term: { kind: 'date', fields: [{ id: 2, modelId: null }], op: '<', day: '2025-12-31' },
    });
    expect(resolve('Sprint = +1m')).toMatchObject({ term: { kind: 'period', day: '2026-02-28' } });
    expect(resolve('Severity ~= crash')).toMatchObject({ term: { fields: [{ id: 6, modelId: 9 }] } });
    expect(resolve('@bob in Likes')).toMatchObject({ term: { kind: 'liked', userIds: [11] } });
    expect(resolve('Likes > 2')).toMatchObject({ term: { kind: 'likes', op: '>', value: 2 } });
  });

  it.each([
    ['Nope = 1', 0, 'a field'],
    ['{Estimate} > x', 13, 'a number'],
    ['state = open', 8, 'a state'],
    ['state > closed', 6, '= !='],
    ['title < a', 6, '= != ~='],
    ['x in title', 2, '= != ~='],
    ['{Due date} = 2026-02-30', 13, 'a date'],
    ['Owners = alice', 9, 'a user'],
    ['archived = maybe', 11, 'true or false'],
    ['ref = 1.5', 6, 'a whole number'],
    ['a or (b and Nope ~= c)', 12, 'a field'],
  ])('refuses %j at position %i expecting %s', (text, position, expected) => {
    const e = errorOf(text);
    expect(e.position).toBe(position);
    expect(e.expected).toContain(expected);
  });

  it('notices filters that decide about archived cards themselves', () => {
    expect(mentionsArchived(parseFilter('a (b or not archived = true)'))).toBe(true);
    expect(mentionsArchived(parseFilter('a b'))).toBe(false);
  });

  it('reads the schema only for filters that name a field, a model or a user', () => {
    for (const text of ['needle #12 #Todo', 'parent = 7 or not state = closed', 'hlevel = 1 created > -7d archived = true']) {
      expect(needsSchema(parseFilter(text))).toBe(false);
    }
    for (const text of ['a or @me', 'not Estimate > 3', '@bob in Owners', 'x (model = Bug)', '{state} = 1']) {
      expect(needsSchema(parseFilter(text))).toBe(true);
    }
  });

  it('matches nothing for @user when no project has a members field', () => {
    const expr = parseFilter('@me');
    expect(resolveFilter(expr, { schema: { fields: [], models: [] }, meId: 42, today: '2026-01-31', users: new Map() })).toEqual({ kind: 'none' });
  });
});

describe('dayValue', () => {
  const v = (text: string) => ({ kind: 'text' as const, text, quoted: false, position: 0 });
  it.each([
    ['today', '2024-02-29'],
    ['-7d', '2024-02-22'],
    ['+2w', '2024-03-14'],
    ['+1m', '2024-03-29'],
    ['-1y', '2023-02-28'],
    ['+12M', '2025-02-28'],
    ['2020-02-29', '2020-02-29'],
  ])('%s from 2024-02-29 is %s', (text, day) => {
    expect(dayValue(v(text), '2024-02-29')).toBe(day);
  });

  it.each(['2021-02-29', '2024-13-01', 'yesterday', '-7', '7d', '-99999d'])('refuses %s', (text) => {
    expect(() => dayValue(v(text), '2024-02-29')).toThrow(FilterError);
  });
});
