import { describe, expect, it } from '@jest/globals';
import { parseMapping, parseUpdateField } from './import-mapping.js';
import {
  MAX_LISTED_PROBLEMS,
  RowChecker,
  type ReferenceLookup,
  type RowCheckContext,
  type RowPlan,
  type TargetContext,
  type TargetField,
} from './row-checker.js';

/**
 * A stand-in for the fields module's rules: numbers must be numeric; a list
 * (members, relationships) has at most 3 entries, members of the form
 * `@name` or an id, repeats dropped; everything else passes.
 */
function parseValue(field: TargetField, input: string | Array<string | number>) {
  if (Array.isArray(input)) {
    if (input.length > 3) return { ok: false as const, message: `${field.name}: expected at most 3 values` };
    const entries = input.map((e) => (typeof e === 'string' && /^\d+$/.test(e) ? Number(e) : e));
    if (entries.some((e) => typeof e === 'string' && !e.startsWith('@'))) return { ok: false as const, message: `${field.name}: expected a user id or @username` };
    return { ok: true as const, value: [...new Set(entries)] };
  }
  if (field.type !== 'number') return { ok: true as const, value: input };
  return Number.isFinite(Number(input)) ? { ok: true as const, value: Number(input) } : { ok: false as const, message: `${field.name}: expected a number` };
}

/** `oneGroupTypeId`: the context columns fill that existing type, which allows one group per card. */
function checker(rawMapping: Record<string, unknown>, options: { updateField?: string; updateOnly?: boolean; oneGroupTypeId?: number } = {}) {
  const mapping = parseMapping(rawMapping, 6);
  const fields = new Map<number, TargetField>();
  const contexts = new Map<number, TargetContext>();
  for (const { column, spec } of mapping.columns) {
    if (spec.type === 'attribute') fields.set(column, { name: spec.name, type: spec.attrType, options: {} });
    const oneGroup = options.oneGroupTypeId;
    if (spec.type === 'context') contexts.set(column, { name: spec.name, groupTypeId: oneGroup ?? null, oneGroupPerCard: oneGroup !== undefined });
  }
  const ctx: RowCheckContext = {
    mapping,
    fields,
    contexts,
    match: parseUpdateField(options.updateField, mapping),
    updateOnly: options.updateOnly ?? false,
    parseValue,
    modelIdByName: (name) => (name.toLowerCase() === 'bug' ? 7 : undefined),
    groupTitleProblem: (title) => (title.includes('\t') ? 'must not contain control characters' : undefined),
  };
  return new RowChecker(ctx);
}

/** A plan with a problem: kept for the later checks, never written. */
const INVALID = { valid: false };

const everyType = {
  '0': { type: 'title' },
  '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
  '2': { type: 'context', name: 'Labels' },
  '3': { type: 'model' },
  '4': { type: 'children' },
  '5': { type: 'ref' },
};

describe('RowChecker.check', () => {
  it('turns every mapping type into a plan', () => {
    const plan = checker({ ...everyType, '5': { type: 'comment' } }).check(
      [' Write docs ', '3', 'docs, writing\nurgent, docs', 'Bug', 'outline\r\n\r\ndraft', 'first pass'],
      2,
    );
    expect(plan).toEqual({
      row: 2,
      valid: true,
      action: 'create',
      cardId: null,
      title: 'Write docs',
      ref: undefined,
      values: [{ column: 1, value: 3, text: '3' }],
      groups: [{ column: 2, titles: ['docs', 'writing', 'urgent'] }],
      modelId: 7,
      comments: ['first pass'],
      children: ['outline', 'draft'],
    });
  });

  it('reads refs as 5 or #5', () => {
    const c = checker(everyType);
    expect(c.check(['a', '', '', '', '', '#12'], 2)).toMatchObject({ ref: 12 });
    expect(c.check(['a', '', '', '', '', '5'], 3)).toMatchObject({ ref: 5 });
    expect(c.check(['a', '', '', '', '', 'five'], 4)).toMatchObject(INVALID);
  });

  it('skips blank rows and lists each problem with its row and column', () => {
    const c = checker(everyType);
    expect(c.check(['', '', '', '', '', ''], 2)).toBe('skip');
    expect(c.check(['', '3'], 3)).toMatchObject(INVALID);
    expect(c.check(['ok', 'three', '', 'Feature'], 4)).toMatchObject(INVALID);
    expect(c.check(['x'.repeat(1025)], 5)).toMatchObject(INVALID);
    expect(c.problems).toEqual([
      { row: 3, column: 0, message: 'the title is empty' },
      { row: 4, column: 1, message: 'Estimate: expected a number' },
      { row: 4, column: 3, message: 'the project has no model named "Feature"' },
      { row: 5, column: 0, message: 'the title is longer than 1024 characters' },
    ]);
    expect(c.problemCount).toBe(4);
  });

  it('lists at most a hundred problems but counts them all', () => {
    const c = checker(everyType);
    for (let row = 1; row <= 250; row++) c.check(['', 'x'], row);
    expect(c.problems).toHaveLength(MAX_LISTED_PROBLEMS);
    expect(c.problemCount).toBe(500);
  });
});

describe('RowChecker matching', () => {
  const plan = (c: RowChecker, cells: string[], row: number) => c.check(cells, row) as RowPlan;

  it('matches by title, ref or a mapped attribute', () => {
    const byTitle = checker(everyType, { updateField: 'title' });
    expect(byTitle.matchKey(plan(byTitle, ['Ship'], 2))).toEqual({ kind: 'title', title: 'Ship' });
    const byRef = checker(everyType, { updateField: 'ref' });
    expect(byRef.matchKey(plan(byRef, ['Ship', '', '', '', '', '#4'], 2))).toEqual({ kind: 'ref', ref: 4 });
    expect(byRef.matchKey(plan(byRef, ['Ship'], 3))).toBeNull();
    const byAttribute = checker(everyType, { updateField: 'estimate' });
    expect(byAttribute.matchKey(plan(byAttribute, ['Ship', '8'], 2))).toEqual({ kind: 'attribute', value: 8 });
  });

  it('updates the one card found, creates or skips when none, refuses several or a card matched twice', () => {
    const c = checker(everyType, { updateField: 'title' });
    expect(c.resolveMatch(plan(c, ['A'], 2), [41])).toMatchObject({ action: 'update', cardId: 41 });
    expect(c.resolveMatch(plan(c, ['B'], 3), [])).toMatchObject({ action: 'create', cardId: null });
    expect(c.resolveMatch(plan(c, ['C'], 4), [1, 2])).toMatchObject(INVALID);
    expect(c.resolveMatch(plan(c, ['A'], 5), [41])).toMatchObject(INVALID);
    expect(c.problems).toEqual([
      { row: 4, column: 0, message: 'matches 2 cards; update_field must single out one card' },
      { row: 5, column: 0, message: 'matches the same card as row 2' },
    ]);
    const only = checker(everyType, { updateField: 'title', updateOnly: true });
    expect(only.resolveMatch(plan(only, ['B'], 3), [])).toBe('skip');
  });
});

describe('RowChecker and members and relationships columns', () => {
  const lists = {
    '0': { type: 'title' },
    '1': { type: 'attribute', attr_type: 'members', name: 'Owners' },
    '2': { type: 'attribute', attr_type: 'relationships', name: 'Related' },
  };
  const lookup: ReferenceLookup = {
    memberProblem: (ref) => (ref === '@ann' || ref === 7 ? undefined : ref === 8 ? "user 8 is not a member of this project's team" : `no user ${String(ref)}`),
    cardId: (ref) => (ref < 100 ? ref + 1000 : undefined),
  };

  it('splits cells on commas and line breaks: members by the fields rules, relationships as refs (5 or #5)', () => {
    const c = checker(lists);
    const plan = c.check(['A', '@ann, 7\n@ann', '#5\r\n6, #5'], 2) as RowPlan;
    expect(plan.values).toEqual([
      { column: 1, value: ['@ann', 7], text: '@ann, 7\n@ann', input: ['@ann', 7] },
      { column: 2, value: [5, 6], text: '#5\r\n6, #5' },
    ]);
    expect(c.references(plan)).toEqual({ members: ['@ann', 7], cards: [5, 6] });
    expect(c.check(['B', 'ann'], 3)).toMatchObject(INVALID);
    expect(c.check(['C', '', '#5, five, six'], 4)).toMatchObject(INVALID);
    expect(c.check(['D', '', '#0'], 5)).toMatchObject(INVALID);
    expect(c.check(['E', '@a, @b, @c, @d'], 6)).toMatchObject(INVALID);
    expect(c.problems).toEqual([
      { row: 3, column: 1, message: 'Owners: expected a user id or @username' },
      { row: 4, column: 2, message: 'Related: "five" is not a card ref such as 5 or #5' },
      { row: 5, column: 2, message: 'Related: "#0" is not a card ref such as 5 or #5' },
      { row: 6, column: 1, message: 'Owners: expected at most 3 values' },
    ]);
  });

  it('resolves references with what the batch found: card ids to write, one problem per cell', () => {
    const c = checker(lists, { updateField: 'title' });
    const ok = c.resolveReferences(c.check(['A', '@ann', '5, 6'], 2) as RowPlan, lookup) as RowPlan;
    expect(ok.values[1]).toMatchObject({ value: [5, 6], input: [1005, 1006] });
    expect(c.resolveReferences(c.check(['B', '@bob, @cid, 8', '5, 500'], 3) as RowPlan, lookup)).toMatchObject(INVALID);
    const self = c.resolveMatch(c.check(['C', '', '5'], 4) as RowPlan, [1005]) as RowPlan;
    expect(c.resolveReferences(self, lookup)).toMatchObject(INVALID);
    expect(c.problems).toEqual([
      { row: 3, column: 1, message: 'Owners: no user @bob (and 2 more in this cell)' },
      { row: 3, column: 2, message: 'Related: the project has no card #500 (a row can relate only to cards that exist before the import)' },
      { row: 4, column: 2, message: 'Related: #5 is the card this row updates, and a card cannot be related to itself' },
    ]);
  });

  it("checks the members and relationships of a row whose other cells have problems, and matches it", () => {
    const c = checker({ ...lists, '3': { type: 'attribute', attr_type: 'number', name: 'Estimate' } }, { updateField: 'title' });
    const bad = c.check(['A', '@bob', '#500', 'x'], 2) as RowPlan;
    expect(bad).toMatchObject({ valid: false, values: [{ column: 1 }, { column: 2 }] });
    expect(c.references(bad)).toEqual({ members: ['@bob'], cards: [500] });
    const matched = c.resolveMatch(bad, [41]);
    expect(matched).toMatchObject({ valid: false, action: 'update', cardId: 41 });
    expect(c.resolveReferences(matched as RowPlan, lookup)).toMatchObject(INVALID);
    expect(c.resolveMatch(c.check(['A'], 3) as RowPlan, [41])).toMatchObject(INVALID);
    expect(c.problems).toEqual([
      { row: 2, column: 1, message: 'Owners: no user @bob' },
      { row: 2, column: 2, message: 'Related: the project has no card #500 (a row can relate only to cards that exist before the import)' },
      { row: 2, column: 3, message: 'Estimate: expected a number' },
      { row: 3, column: 0, message: 'matches the same card as row 2' },
    ]);
  });

  it('leaves plans of sheets without such columns as they are', () => {
    const c = checker(everyType);
    const plan = c.check(['A', '3'], 2) as RowPlan;
    expect(c.resolveReferences(plan, lookup)).toBe(plan);
  });
});

describe('RowChecker and a group type that allows one group per card', () => {
  const plan = (c: RowChecker, cells: string[], row: number) => c.check(cells, row) as RowPlan;

  it('refuses a cell that names several of its groups', () => {
    const c = checker(everyType, { oneGroupTypeId: 9 });
    expect(c.check(['A', '', 'Doing'], 2)).toMatchObject({ groups: [{ column: 2, titles: ['Doing'] }] });
    expect(c.check(['B', '', 'Doing, done\nDOING'], 3)).toMatchObject(INVALID);
    expect(c.problems).toEqual([{ row: 3, column: 2, message: '"Labels" allows one group per card, and this cell names 2' }]);
    // A type the import creates allows several.
    expect(checker(everyType).check(['B', '', 'Doing, done'], 3)).toMatchObject({ groups: [{ column: 2, titles: ['Doing', 'done'] }] });
  });

  it("refuses an update that would take its card into a second group, and keeps one naming the card's group in any case", () => {
    const c = checker(everyType, { updateField: 'title', oneGroupTypeId: 9 });
    const update = (cells: string[], row: number, cardId: number) => c.resolveMatch(plan(c, cells, row), [cardId]) as RowPlan;
    const moving = update(['A', '', 'Done'], 2, 41);
    expect(c.oneGroupColumns(moving)).toEqual([{ column: 2, typeId: 9, title: 'Done' }]);
    expect(c.checkHeldGroups(moving, [{ typeId: 9, title: 'Doing' }])).toMatchObject(INVALID);
    const staying = update(['B', '', 'doing'], 3, 42);
    expect(c.checkHeldGroups(staying, [{ typeId: 9, title: 'Doing' }, { typeId: 10, title: 'docs' }])).toBe(staying);
    const joining = update(['C', '', 'Done'], 4, 43);
    expect(c.checkHeldGroups(joining, [{ typeId: 10, title: 'docs' }])).toBe(joining);
    expect(c.problems).toEqual([
      { row: 2, column: 2, message: 'the card is in "Doing" of "Labels", which allows one group per card; move it with relocate' },
    ]);
    // Types the import creates, and types that allow several groups, have no such columns.
    const several = checker(everyType, { updateField: 'title' });
    expect(several.oneGroupColumns(several.resolveMatch(plan(several, ['A', '', 'Done'], 2), [41]) as RowPlan)).toEqual([]);
  });
});

describe('parseMapping', () => {
  const bad = (mapping: unknown, columns = 6) => {
    try {
      parseMapping(mapping, columns);
    } catch (error) {
      return (error as { errors: Array<{ field: string; message: string }> }).errors[0];
    }
    throw new Error('accepted');
  };

  it('names what is wrong', () => {
    expect(bad(null).field).toBe('mapping');
    expect(bad({ '1': { type: 'comment' } })).toEqual({ field: 'mapping', message: expect.stringMatching(/title/) });
    expect(bad({ '0': { type: 'title' }, '01': { type: 'comment' } }).field).toBe('mapping.01');
    expect(bad({ '0': { type: 'title' }, '9': { type: 'comment' } })).toEqual({ field: 'mapping.9', message: 'the spreadsheet has no column 9 (it has 6)' });
    expect(bad({ '0': { type: 'title' }, '1': { type: 'title' } }).field).toBe('mapping.1');
    expect(bad({ '0': { type: 'title' }, '1': { type: 'colour' } }).field).toBe('mapping.1.type');
    expect(bad({ '0': { type: 'title' }, '1': { type: 'attribute', name: 'X', attr_type: 'files' } })).toEqual({
      field: 'mapping.1.attr_type',
      message: expect.stringMatching(/^files cannot be filled from a spreadsheet/),
    });
    expect(bad({ '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text' } }).field).toBe('mapping.1.name');
    expect(bad({ '0': { type: 'title', name: 'x' } }).field).toBe('mapping.0.name');
    expect(bad({ '0': { type: 'title' }, '1': { type: 'context', name: 'Tags' }, '2': { type: 'attribute', attr_type: 'text', name: 'tags' } }).field).toBe(
      'mapping.2.name',
    );
  });

  it('takes a group_type attribute as a context', () => {
    const m = parseMapping({ '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'group_type', name: 'Status' } }, 2);
    expect(m.columns[1]).toEqual({ column: 1, spec: { type: 'context', name: 'Status' } });
  });

  it('update_field must be title, ref with a ref column, or a mapped attribute', () => {
    const m = parseMapping({ '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'Key' } }, 2);
    expect(parseUpdateField(undefined, m)).toBeNull();
    expect(parseUpdateField('KEY', m)).toEqual({ kind: 'attribute', column: 1, name: 'Key' });
    expect(() => parseUpdateField('ref', m)).toThrow(/a column mapped to ref/);
    expect(() => parseUpdateField('Owner', m)).toThrow(/update_field/);
    const people = parseMapping({ '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'members', name: 'People' } }, 2);
    expect(() => parseUpdateField('People', people)).toThrow(/cannot be matched on a members attribute/);
  });

  it('update_field takes title and ref in any case; an attribute of such a name wins over every spelling but the keyword\'s own', () => {
    const m = parseMapping({ '0': { type: 'title' }, '1': { type: 'ref' } }, 2);
    for (const raw of ['Title', 'TITLE', ' title ']) expect(parseUpdateField(raw, m)).toEqual({ kind: 'title', column: 0 });
    for (const raw of ['Ref', 'REF']) expect(parseUpdateField(raw, m)).toEqual({ kind: 'ref', column: 1 });
    expect(() => parseUpdateField('Ref', parseMapping({ '0': { type: 'title' } }, 1))).toThrow(/a column mapped to ref/);
    const named = parseMapping({ '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'Title' }, '2': { type: 'ref' } }, 3);
    expect(parseUpdateField('title', named)).toEqual({ kind: 'title', column: 0 });
    expect(parseUpdateField('Title', named)).toEqual({ kind: 'attribute', column: 1, name: 'Title' });
    expect(parseUpdateField('TITLE', named)).toEqual({ kind: 'attribute', column: 1, name: 'Title' });
  });
});
