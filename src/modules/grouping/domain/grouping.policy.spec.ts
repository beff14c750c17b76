import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Group } from './group.entity.js';
import { GroupType } from './group-type.entity.js';
import { InvalidGroupingInputError } from './grouping.errors.js';
import { MAX_POSITION } from '../../../shared/domain/positions.js';
import { readId, readName, readPosition, sameTitle, slot } from './grouping.policy.js';

const refused = (fn: () => unknown, field: string) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidGroupingInputError);
    expect((error as InvalidGroupingInputError).errors).toEqual([expect.objectContaining({ field })]);
    return;
  }
  throw new Error('expected a refusal');
};

describe('slot', () => {
  it('is last without a position and clamps into [0, max] otherwise', () => {
    expect(slot(undefined, 3)).toBe(3);
    expect(slot(0, 3)).toBe(0);
    expect(slot(2, 3)).toBe(2);
    expect(slot(99, 3)).toBe(3);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_POSITION }), fc.nat(10_000), (p, max) => {
        const s = slot(p, max);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(max);
        expect(s === p || (p > max && s === max)).toBe(true);
      }),
    );
  });
});

describe('readId', () => {
  it('takes positive integers and their decimal strings', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => expect(readId(n, 'group_id')).toBe(n)));
    expect(readId('42', 'group_id')).toBe(42);
  });

  it.each([0, -1, 1.5, '0', '01', 'abc', '', null, undefined, true, {}, [], Number.MAX_SAFE_INTEGER + 1, '9999999999999999'])(
    'refuses %p naming the property',
    (value) => refused(() => readId(value, 'group_id'), 'group_id'),
  );
});

describe('readPosition', () => {
  it('is undefined when absent and takes non-negative integers (or their strings)', () => {
    expect(readPosition(undefined)).toBeUndefined();
    expect(readPosition(null)).toBeUndefined();
    expect(readPosition(0)).toBe(0);
    expect(readPosition('7')).toBe(7);
    fc.assert(fc.property(fc.integer({ min: 0, max: MAX_POSITION }), (n) => expect(readPosition(n)).toBe(n)));
  });

  it('brings any other integer into [0, MAX_POSITION]: DESIGN.md §4 clamps positions, so -1 is first and a huge one last', () => {
    expect(readPosition(-1)).toBe(0);
    expect(readPosition('-5')).toBe(0);
    expect(readPosition(MAX_POSITION + 1)).toBe(MAX_POSITION);
    expect(readPosition(Number.MAX_SAFE_INTEGER)).toBe(MAX_POSITION);
    expect(readPosition(Number.MIN_SAFE_INTEGER)).toBe(0);
    // Integers past the safe range too: their size is all the clamp needs.
    expect(readPosition(Number.MAX_SAFE_INTEGER + 1)).toBe(MAX_POSITION);
    expect(readPosition(1e300)).toBe(MAX_POSITION);
    expect(readPosition(-1e300)).toBe(0);
  });

  it.each([0.5, 'first', '1.5', '', '1e3', Number.NaN, true, {}, []])('refuses %p naming position', (value) =>
    refused(() => readPosition(value), 'position'),
  );
});

describe('readName', () => {
  it('trims and keeps the rest as given', () => {
    expect(readName('  To do ', 'title')).toBe('To do');
    expect(readName('Ünïcode ✓', 'title')).toBe('Ünïcode ✓');
    expect(readName('x'.repeat(1024), 'title')).toHaveLength(1024);
  });

  it.each([['empty', ''], ['blank', '   '], ['too long', 'x'.repeat(1025)], ['a line break', 'a\nb'], ['a number', 3], ['null', null]])(
    'refuses %s naming the property',
    (_label, value) => refused(() => readName(value, 'name'), 'name'),
  );
});

describe('sameTitle', () => {
  it('ignores case only', () => {
    expect(sameTitle('To do', 'TO DO')).toBe(true);
    expect(sameTitle('To do', 'To-do')).toBe(false);
  });
});

describe('GroupType.mayAlsoJoin', () => {
  const type = (oneGroupPerCard: boolean) => Object.assign(new GroupType(), { oneGroupPerCard });

  it('lets a card hold several groups of a type that allows it', () => {
    expect(type(false).mayAlsoJoin(3, [1, 2])).toBe(true);
  });

  it('lets a card into its first group of a one-group type, or the one it is in, and no other', () => {
    expect(type(true).mayAlsoJoin(3, [])).toBe(true);
    expect(type(true).mayAlsoJoin(3, [3])).toBe(true);
    expect(type(true).mayAlsoJoin(3, [1])).toBe(false);
  });
});

describe('Group.isAvailableTo', () => {
  it('is available to cards under its scope card only (not to the scope card itself)', () => {
    const group = Object.assign(new Group(), { cardId: 10 });
    expect(group.isAvailableTo({ ancestorIds: [1, 10, 12] })).toBe(true);
    expect(group.isAvailableTo({ ancestorIds: [1] })).toBe(false);
    expect(group.isAvailableTo({ ancestorIds: [] })).toBe(false);
  });
});
