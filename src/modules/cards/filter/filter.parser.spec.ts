import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { FilterExpr } from './filter.ast.js';
import { FilterError } from './filter.errors.js';
import { MAX_FILTER_DEPTH, parseFilter } from './filter.parser.js';

function errorOf(text: string): FilterError {
  try {
    parseFilter(text);
  } catch (e) {
    if (e instanceof FilterError) return e;
    throw e;
  }
  throw new Error(`"${text}" parsed without error`);
}

const text = (t: string, position: number): FilterExpr => ({ kind: 'text', text: t, position });

describe('parseFilter', () => {
  it('reads an empty or blank filter as "every card"', () => {
    expect(parseFilter('')).toEqual({ kind: 'all' });
    expect(parseFilter('   ')).toEqual({ kind: 'all' });
  });

  it('reads bare words and quoted phrases as title searches, joined by an implicit and', () => {
    expect(parseFilter('bug "login page"')).toEqual({
      kind: 'and',
      items: [text('bug', 0), text('login page', 4)],
    });
    expect(parseFilter('"say \\"hi\\" \\\\ bye"')).toEqual(text('say "hi" \\ bye', 0));
  });

  it('reads refs, groups, users and @me', () => {
    expect(parseFilter('#12')).toEqual({ kind: 'ref', ref: 12, position: 0 });
    expect(parseFilter('#Todo')).toEqual({ kind: 'group', name: 'Todo', position: 0 });
    expect(parseFilter('#{In review}')).toEqual({ kind: 'group', name: 'In review', position: 0 });
    expect(parseFilter('#{42}')).toEqual({ kind: 'group', name: '42', position: 0 });
    expect(parseFilter('@alice')).toEqual({ kind: 'member', user: { kind: 'name', name: 'alice', displayName: false }, position: 0 });
    expect(parseFilter('@ME')).toEqual({ kind: 'member', user: { kind: 'me' }, position: 0 });
    expect(parseFilter('@{Alice Smith}')).toEqual({
      kind: 'member',
      user: { kind: 'name', name: 'Alice Smith', displayName: true },
      position: 0,
    });
    expect(parseFilter('@{me}')).toEqual({ kind: 'member', user: { kind: 'name', name: 'me', displayName: true }, position: 0 });
  });

  it('reads comparisons with every operator, with or without spaces', () => {
    for (const op of ['=', '!=', '>', '>=', '<', '<=', '~='] as const) {
      expect(parseFilter(`Estimate${op}3`)).toEqual({
        kind: 'compare',
        field: { kind: 'custom', name: 'Estimate', position: 0 },
        op,
        opPosition: 8,
        value: { kind: 'text', text: '3', quoted: false, position: 8 + op.length },
        position: 0,
      });
    }
    expect(parseFilter('{Due date} < -7d')).toMatchObject({
      field: { kind: 'custom', name: 'Due date' },
      op: '<',
      value: { text: '-7d', position: 13 },
    });
  });

  it('knows the builtin fields in any case, and braces always name a project field', () => {
    expect(parseFilter('STATE = closed')).toMatchObject({ field: { kind: 'builtin', name: 'state' } });
    expect(parseFilter('{state} = closed')).toMatchObject({ field: { kind: 'custom', name: 'state' } });
    for (const f of ['title', 'ref', 'hlevel', 'model', 'archived', 'created', 'updated', 'parent']) {
      expect(parseFilter(`${f}=x`)).toMatchObject({ field: { kind: 'builtin', name: f } });
    }
  });

  it('reads values: quoted, @user, @me and #ref', () => {
    expect(parseFilter('title = "a b"')).toMatchObject({ value: { kind: 'text', text: 'a b', quoted: true } });
    expect(parseFilter('Owners = @me')).toMatchObject({ value: { kind: 'user', user: { kind: 'me' } } });
    expect(parseFilter('parent = #7')).toMatchObject({ value: { kind: 'text', text: '7', position: 10 } });
  });

  it('reads "value in field"', () => {
    expect(parseFilter('@bob in Owners')).toEqual({
      kind: 'in',
      value: { kind: 'user', user: { kind: 'name', name: 'bob', displayName: false }, position: 0 },
      field: { kind: 'custom', name: 'Owners', position: 8 },
      opPosition: 5,
      position: 0,
    });
    expect(parseFilter('"x y" IN {My tags}')).toMatchObject({
      kind: 'in',
      value: { kind: 'text', text: 'x y', quoted: true },
      field: { kind: 'custom', name: 'My tags' },
    });
    expect(parseFilter('urgent in Tags')).toMatchObject({ kind: 'in', value: { text: 'urgent' } });
    // A ref as the value, as `Blocks = #12` takes it; `#12` alone is still the card with that ref.
    expect(parseFilter('#12 in Blocks')).toMatchObject({ kind: 'in', value: { kind: 'text', text: '12', position: 1 }, position: 0 });
    expect(parseFilter('#12 Blocks')).toMatchObject({ kind: 'and' });
  });

  it('binds not tighter than and, and and tighter than or', () => {
    expect(parseFilter('a or not b c')).toEqual({
      kind: 'or',
      items: [text('a', 0), { kind: 'and', items: [{ kind: 'not', item: text('b', 9) }, text('c', 11)] }],
    });
    expect(parseFilter('(a OR b) AND c')).toEqual({
      kind: 'and',
      items: [{ kind: 'or', items: [text('a', 1), text('b', 6)] }, text('c', 13)],
    });
    expect(parseFilter('not not a')).toEqual({ kind: 'not', item: { kind: 'not', item: text('a', 8) } });
  });

  it('keeps punctuation inside words and ends words at operators', () => {
    expect(parseFilter('wow! a~b e-mail alice@example.com')).toEqual({
      kind: 'and',
      items: [text('wow!', 0), text('a~b', 5), text('e-mail', 9), text('alice@example.com', 16)],
    });
  });

  it.each([
    ['(a', 2, '")"'],
    ['a)', 1, 'a term or the end of the filter'],
    ['a and', 5, 'a term'],
    ['or a', 0, 'a term'],
    ['Estimate >=', 11, 'a value'],
    ['{Due} today', 6, 'an operator'],
    ['"open', 5, 'a closing "'],
    ['{Due', 4, 'a closing }'],
    ['{ } = 1', 1, 'a name inside {}'],
    ['# x', 1, 'a ref number or a group name after #'],
    ['@', 1, 'a user name or me after @'],
    ['x in', 4, 'a field name after "in"'],
    ['x in and', 5, 'a field name after "in"'],
    ['= 3', 0, 'a term'],
    ['a }', 2, 'a term'],
    ['#99999999999999999999', 1, 'a ref number of at most 15 digits'],
    ['()', 1, 'a term'],
  ])('reports %j at position %i expecting %s', (filter, position, expected) => {
    const e = errorOf(filter);
    expect(e.position).toBe(position);
    expect(e.expected).toContain(expected);
    expect(e.extra).toEqual({ position, expected: e.expected });
    expect(e.errors?.[0]).toMatchObject({ field: 'filter', position });
  });

  it("refuses an instant split by a space (its offset's + sent unencoded, or a space for its T), pointing at the space", () => {
    const refusal = (filter: string) => {
      try {
        parseFilter(filter);
      } catch (e) {
        return e instanceof FilterError ? [e.position, e.expected, e.problem] : e;
      }
      return undefined;
    };
    expect(refusal('updated >= 2026-11-28T10:00:00.123 01:00')).toEqual([
      34,
      'an offset +HH:MM',
      'expected an offset +HH:MM, found a space: a "+" in a URL\'s query string is a space, send it as %2B',
    ]);
    expect(refusal('created < 2026-11-28t10:00 05:30 and login')).toEqual([26, 'an offset +HH:MM', expect.any(String)]);
    // Written with its sign, or as separate words, it is what it says.
    expect(refusal('updated >= 2026-11-28T10:00+01:00 login')).toBeUndefined();
    expect(refusal('updated >= 2026-11-28T10:00  01:00')).toBeUndefined();
    // A space for the T.
    expect(refusal('updated >= 2026-11-28 15:26:13Z')).toEqual([21, 'T between the day and the time', expect.stringContaining('found a space')]);
    expect(refusal('created = 2026-11-28 10:00')).toEqual([20, 'T between the day and the time', expect.any(String)]);
    expect(refusal('updated >= 2026-11-28 login')).toBeUndefined();
  });

  it('refuses nesting deeper than the limit without overflowing the stack', () => {
    expect(parseFilter('('.repeat(MAX_FILTER_DEPTH) + 'a' + ')'.repeat(MAX_FILTER_DEPTH))).toEqual(text('a', MAX_FILTER_DEPTH));
    expect(errorOf('('.repeat(3000)).position).toBe(MAX_FILTER_DEPTH);
    expect(errorOf('not '.repeat(500) + 'a').position).toBe(MAX_FILTER_DEPTH * 4);
  });

  it('never throws anything but a FilterError, and every error points inside the text', () => {
    const alphabet = fc.constantFrom(...'ab #@{}()"\\=!<>~-: 7dinotrAND'.split(''), ' and ', ' or ', ' not ', ' in ');
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(alphabet, { maxLength: 40 }).map((a) => a.join(''))), (s) => {
        try {
          parseFilter(s);
        } catch (e) {
          expect(e).toBeInstanceOf(FilterError);
          const { position } = e as FilterError;
          expect(position).toBeGreaterThanOrEqual(0);
          expect(position).toBeLessThanOrEqual(s.length);
        }
      }),
      { numRuns: 3000, seed: 10 },
    );
  });

  it('reads back what a printer writes (round trip over random trees)', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/).filter((w) => !['and', 'or', 'not', 'in'].includes(w));
    const leaf = fc.oneof(
      word.map((w) => ({ s: w, e: { kind: 'text', text: w } })),
      fc.string({ maxLength: 8 }).map((w) => ({ s: JSON.stringify(w), e: { kind: 'text', text: w } })),
      fc.nat({ max: 10_000 }).map((n) => ({ s: `#${n}`, e: { kind: 'ref', ref: n } })),
      word.map((w) => ({ s: `@${w}`, e: { kind: 'member', user: w === 'me' ? { kind: 'me' } : { kind: 'name', name: w, displayName: false } } })),
      fc.tuple(word, fc.constantFrom('=', '!=', '>', '>=', '<', '<=', '~='), word).map(([f, op, v]) => ({
        s: `{${f}} ${op} ${v}`,
        e: { kind: 'compare', field: { kind: 'custom', name: f }, op, value: { kind: 'text', text: v } },
      })),
    );
    type Node = { s: string; e: unknown };
    const tree: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        tie('node').map((n) => ({ s: `not (${n.s})`, e: { kind: 'not', item: n.e } })),
        fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((ns) => ({
          s: ns.map((n) => `(${n.s})`).join(' or '),
          e: { kind: 'or', items: ns.map((n) => n.e) },
        })),
        fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((ns) => ({
          s: ns.map((n) => `(${n.s})`).join(' and '),
          e: { kind: 'and', items: ns.map((n) => n.e) },
        })),
      ),
    })).node;
    fc.assert(
      fc.property(tree, (n) => {
        expect(stripPositions(parseFilter(n.s))).toEqual(n.e);
      }),
      { numRuns: 1000, seed: 11 },
    );
  });
});

function stripPositions(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripPositions);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => k !== 'position' && k !== 'opPosition' && k !== 'quoted')
        .map(([k, x]) => [k, stripPositions(x)]),
    );
  }
  return v;
}
