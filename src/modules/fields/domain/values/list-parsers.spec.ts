import { describe, expect, it } from '@jest/globals';
import { MAX_LIST_ITEMS } from './list-value.parser.js';
import { parseMemberRef, parseMembers } from './members.parser.js';
import { parseRelationships } from './relationships.parser.js';
import { expectRefused } from './refusal.test-support.js';

describe('members', () => {
  it('takes user ids and @usernames, single or as a list', () => {
    expect(parseMembers('Owners', 7)).toEqual([{ kind: 'user_id', id: 7 }]);
    expect(parseMembers('Owners', ' 7 ')).toEqual([{ kind: 'user_id', id: 7 }]);
    expect(parseMembers('Owners', '@ann.lee')).toEqual([{ kind: 'username', username: 'ann.lee' }]);
    expect(parseMembers('Owners', [3, '@bob', '4'])).toEqual([
      { kind: 'user_id', id: 3 },
      { kind: 'username', username: 'bob' },
      { kind: 'user_id', id: 4 },
    ]);
    expect(parseMembers('Owners', [])).toEqual([]);
    expect(parseMembers('Owners', null)).toBeNull();
  });

  it('drops repeats, usernames compared without case', () => {
    expect(parseMembers('Owners', [3, '3', '@Bob', '@bob', 3])).toEqual([
      { kind: 'user_id', id: 3 },
      { kind: 'username', username: 'Bob' },
    ]);
  });

  it.each([[0], [-1], [1.5], ['bob'], ['@'], ['@bad name'], ['@' + 'a'.repeat(65)], [true], [{ id: 1 }], [[[1]]], [2 ** 53]])(
    'refuses %j',
    (value) => {
      expectRefused(() => parseMembers('Owners', value), 'Owners', 'expected a user id or @username');
    },
  );

  it('refuses more than the list limit', () => {
    const many = Array.from({ length: MAX_LIST_ITEMS + 1 }, (_, i) => i + 1);
    expectRefused(() => parseMembers('Owners', many), 'Owners', /at most 1000/);
    expect(parseMembers('Owners', many.slice(1))).toHaveLength(MAX_LIST_ITEMS);
  });

  it('parses one reference for append and pop', () => {
    expect(parseMemberRef('Owners', '@ann')).toEqual({ kind: 'username', username: 'ann' });
    expectRefused(() => parseMemberRef('Owners', [1]), 'Owners');
  });
});

describe('relationships', () => {
  it('takes card ids, single or as a list, without repeats', () => {
    expect(parseRelationships('Blocks', 12)).toEqual([12]);
    expect(parseRelationships('Blocks', ['12', 13, 12])).toEqual([12, 13]);
    expect(parseRelationships('Blocks', null)).toBeNull();
  });

  it.each([[0], ['0'], [-3], [2.5], ['abc'], ['#12'], [''], [true], [{ id: 12 }], [[1, 'x']]])('refuses %j', (value) => {
    expectRefused(() => parseRelationships('Blocks', value), 'Blocks', 'expected a card id');
  });
});
