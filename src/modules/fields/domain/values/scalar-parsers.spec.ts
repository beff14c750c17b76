import { describe, expect, it } from '@jest/globals';
import { parseBool } from './bool.parser.js';
import { parseGroupType } from './group-type.parser.js';
import { parseLikes } from './likes.parser.js';
import { parseNumber } from './number.parser.js';
import { MAX_CONTENT_LENGTH, MAX_TEXT_LENGTH, parseContent, parseText } from './text.parser.js';
import { parseTime } from './time.parser.js';
import { expectRefused } from './refusal.test-support.js';

describe('text and content', () => {
  it('keeps strings as sent and clears on null', () => {
    expect(parseText('Title', 'hello  ')).toBe('hello  ');
    expect(parseText('Title', '')).toBe('');
    expect(parseContent('Notes', '# Heading\n\n*x*')).toBe('# Heading\n\n*x*');
    expect(parseText('Title', null)).toBeNull();
    expect(parseContent('Notes', null)).toBeNull();
  });

  it('counts code points, not UTF-16 units, against the limit', () => {
    expect(parseText('Title', '😀'.repeat(MAX_TEXT_LENGTH))).toHaveLength(MAX_TEXT_LENGTH * 2);
    expectRefused(() => parseText('Title', 'a'.repeat(MAX_TEXT_LENGTH + 1)), 'Title', /at most 10000/);
    expect(parseContent('Notes', 'a'.repeat(MAX_CONTENT_LENGTH))).toHaveLength(MAX_CONTENT_LENGTH);
    expectRefused(() => parseContent('Notes', 'a'.repeat(MAX_CONTENT_LENGTH + 1)), 'Notes', /at most 100000/);
  });

  it.each([[1], [true], [[]], [{}], [['a']]])('refuses non-strings: %j', (value) => {
    expectRefused(() => parseText('Title', value), 'Title', 'expected a string');
    expectRefused(() => parseContent('Notes', value), 'Notes', 'expected a markdown string');
  });

  it('refuses text the database could not store faithfully', () => {
    expectRefused(() => parseText('Title', 'a\u0000b'), 'Title', /NUL/);
    expectRefused(() => parseContent('Notes', 'lone \ud800 surrogate'), 'Notes', /Unicode/);
  });
});

describe('number', () => {
  it.each([
    [3, 3],
    [-2.5, -2.5],
    ['3', 3],
    [' 2.5 ', 2.5],
    ['-1e3', -1000],
    ['+.5', 0.5],
    ['7.', 7],
    [-0, 0],
    ['-0', 0],
  ])('accepts %j as %j', (input, output) => {
    expect(Object.is(parseNumber('Estimate', input), output)).toBe(true);
  });

  it('clears on null', () => {
    expect(parseNumber('Estimate', null)).toBeNull();
  });

  it.each([[true], [false], [[]], [[1]], [{}], [''], ['  '], ['abc'], ['0x10'], ['1,5'], ['Infinity'], ['NaN'], ['1e400'], [Number.NaN], [Number.POSITIVE_INFINITY]])(
    'refuses %j',
    (value) => {
      expectRefused(() => parseNumber('Estimate', value), 'Estimate', /expected a (finite )?number/);
    },
  );

  it('says "Estimate: expected a number"', () => {
    expectRefused(() => parseNumber('Estimate', 'abc'), 'Estimate', /^Estimate: expected a number$/);
  });
});

describe('bool', () => {
  it.each([[false], ['false'], ['no'], ['0'], [''], [0], ['  FALSE '], ['No'], ['   ']])('%j is false', (input) => {
    expect(parseBool('Done', input)).toBe(false);
  });

  it.each([[true], [1], ['true'], ['yes'], ['1'], ['off'], ['anything']])('%j is true', (input) => {
    expect(parseBool('Done', input)).toBe(true);
  });

  it('clears on null', () => {
    expect(parseBool('Done', null)).toBeNull();
  });

  it.each([[2], [-1], [0.5], [[]], [[true]], [{}], [{ value: true }]])('refuses %j', (value) => {
    expectRefused(() => parseBool('Done', value), 'Done', /expected a boolean/);
  });

  it.each([['a\u0000b'], ['\ud800'], ['yes\udc00']])('refuses the string %j, which no text field would take', (value) => {
    expectRefused(() => parseBool('Done', value), 'Done', /without NUL characters or invalid Unicode/);
  });
});

describe('time', () => {
  it.each([['00:00:00'], ['23:59:59'], ['12:30:05'], [' 08:00:00 ']])('accepts %j', (input) => {
    expect(parseTime('Start', input)).toBe(input.trim());
  });

  it('clears on null', () => {
    expect(parseTime('Start', null)).toBeNull();
  });

  it.each([['24:00:00'], ['12:60:00'], ['12:00:60'], ['8:00:00'], ['12:00'], ['12:00:00.5'], ['12:00:00Z'], [''], [720], [true], [{}]])(
    'refuses %j',
    (value) => {
      expectRefused(() => parseTime('Start', value), 'Start', 'expected a time HH:MM:SS');
    },
  );
});

describe('likes', () => {
  it.each([
    [-1, -1],
    [0, 0],
    [1, 1],
    ['-1', -1],
    ['0', 0],
    [' 1 ', 1],
    ['+1', 1],
  ])('accepts %j as %j', (input, output) => {
    expect(parseLikes('Votes', input)).toBe(output);
  });

  it('clears on null', () => {
    expect(parseLikes('Votes', null)).toBeNull();
  });

  it.each([[2], [-2], [0.5], ['2'], ['1.0'], [''], ['up'], [true], [[1]], [{}]])('refuses %j', (value) => {
    expectRefused(() => parseLikes('Votes', value), 'Votes', 'expected a vote: -1, 0 or 1');
  });
});

describe('group_type', () => {
  it.each([[null], [1], ['Label'], [[1, 2]]])('always refuses, pointing at the grouping operations: %j', (value) => {
    expectRefused(() => parseGroupType('Labels', value), 'Labels', /add-to-group, remove-from-group, relocate/);
  });
});
