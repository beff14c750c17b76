import { describe, expect, it } from '@jest/globals';
import type { FieldDef, FieldType } from './field-value.types.js';
import { parseListItem, parsePopValue, parseValue } from './field-value.parser.js';
import { expectRefused } from './refusal.test-support.js';

const def = (type: FieldType, options: FieldDef['options'] = {}): FieldDef => ({ name: `My ${type}`, type, options });

describe('parseValue', () => {
  it('dispatches on the field type', () => {
    expect(parseValue(def('text'), 'x')).toBe('x');
    expect(parseValue(def('content'), '# x')).toBe('# x');
    expect(parseValue(def('number'), '4')).toBe(4);
    expect(parseValue(def('bool'), 'no')).toBe(false);
    expect(parseValue(def('date'), '2024-01-01')).toBe('2024-01-01');
    expect(parseValue(def('date', { time: true }), '2024-01-01 10:00:00')).toBe('2024-01-01T10:00:00');
    expect(parseValue(def('date', { period: true }), '2024-01-01 -> 2024-01-02')).toEqual({
      start: '2024-01-01',
      end: '2024-01-02',
    });
    expect(parseValue(def('time'), '10:00:00')).toBe('10:00:00');
    expect(parseValue(def('members'), '@ann')).toEqual([{ kind: 'username', username: 'ann' }]);
    expect(parseValue(def('likes'), '-1')).toBe(-1);
    expect(parseValue(def('relationships'), [5, 5])).toEqual([5]);
    expect(parseValue(def('files'), 'https://example.com/a')).toEqual([{ kind: 'url', url: 'https://example.com/a' }]);
  });

  it('clears every type but group_type on null', () => {
    for (const type of ['text', 'content', 'number', 'bool', 'date', 'time', 'members', 'likes', 'relationships', 'files'] as const) {
      expect(parseValue(def(type), null)).toBeNull();
    }
    expectRefused(() => parseValue(def('group_type'), null), 'My group_type', /grouping operations/);
  });

  it('names the field in every refusal', () => {
    expectRefused(() => parseValue({ name: 'Estimate', type: 'number', options: {} }, 'abc'), 'Estimate', /^Estimate: expected a number$/);
  });
});

describe('parseListItem and parsePopValue', () => {
  it('take one value of a multi-valued field', () => {
    expect(parseListItem(def('members'), 3)).toEqual({ kind: 'user_id', id: 3 });
    expect(parseListItem(def('relationships'), '8')).toBe(8);
    expect(parseListItem(def('files'), { name: 'a.txt', data: 'x' })).toEqual({ kind: 'text', name: 'a.txt', content: 'x' });
    expect(parsePopValue(def('members'), '@bob')).toEqual({ kind: 'username', username: 'bob' });
    expect(parsePopValue(def('relationships'), 8)).toBe(8);
    expect(parsePopValue(def('files'), '12')).toBe(12);
  });

  it('refuse arrays, since append adds exactly one value', () => {
    expectRefused(() => parseListItem(def('relationships'), [1, 2]), 'My relationships');
    expectRefused(() => parseListItem(def('members'), [1]), 'My members');
  });

  it('refuse single-valued types', () => {
    expectRefused(() => parseListItem(def('text'), 'x'), 'My text', /only to members, relationships and files/);
    expectRefused(() => parsePopValue(def('number'), 1), 'My number', /only to members, relationships and files/);
    expectRefused(() => parseListItem(def('group_type'), 1), 'My group_type', /grouping operations/);
  });
});
