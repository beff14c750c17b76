import { describe, expect, it } from '@jest/globals';
import { parseDate } from './date.parser.js';
import { expectRefused } from './refusal.test-support.js';

const plain = {};
const withTime = { time: true };
const period = { period: true };
const periodWithTime = { period: true, time: true };

describe('date', () => {
  it('accepts real calendar dates', () => {
    expect(parseDate('Due', '2024-02-29', plain)).toBe('2024-02-29');
    expect(parseDate('Due', ' 2000-02-29 ', plain)).toBe('2000-02-29');
    expect(parseDate('Due', '0001-01-01', plain)).toBe('0001-01-01');
    expect(parseDate('Due', '9999-12-31', plain)).toBe('9999-12-31');
    expect(parseDate('Due', null, plain)).toBeNull();
  });

  it.each([['2023-02-29'], ['2023-02-30'], ['1900-02-29'], ['2024-04-31'], ['2024-13-01'], ['2024-00-10'], ['2024-01-00'], ['0000-01-01'], ['2024-1-5'], ['24-01-05'], ['20240105'], ['2024/01/05'], ['']])(
    'refuses %j',
    (value) => {
      expectRefused(() => parseDate('Due', value, plain), 'Due', 'expected a date YYYY-MM-DD');
    },
  );

  it.each([[20240105], [true], [[]], [{}], [{ start: '2024-01-01', end: '2024-01-02' }]])('refuses non-strings: %j', (value) => {
    expectRefused(() => parseDate('Due', value, plain), 'Due', 'expected a date');
  });

  it('refuses a time on a field without the time option', () => {
    expectRefused(() => parseDate('Due', '2024-01-05 10:00:00', plain), 'Due', /no time option/);
    expectRefused(() => parseDate('Due', '2024-01-05T10:00:00', plain), 'Due', /no time option/);
  });

  it('with the time option takes either separator and shows T', () => {
    expect(parseDate('Due', '2024-01-05 10:20:30', withTime)).toBe('2024-01-05T10:20:30');
    expect(parseDate('Due', '2024-01-05T23:59:59', withTime)).toBe('2024-01-05T23:59:59');
    expect(parseDate('Due', '2024-01-05', withTime)).toBe('2024-01-05');
  });

  it.each([['2024-01-05 24:00:00'], ['2024-01-05 10:00'], ['2024-01-05T10:00:00Z'], ['2024-01-05T10:00:00+02:00'], ['2024-01-05T10:00:00.123'], ['2024-01-05  10:00:00']])(
    'with the time option refuses %j',
    (value) => {
      expectRefused(() => parseDate('Due', value, withTime), 'Due', 'YYYY-MM-DD HH:MM:SS');
    },
  );
});

describe('date period', () => {
  it('accepts the object and the arrow string and always shows {start, end}', () => {
    expect(parseDate('Sprint', { start: '2024-01-01', end: '2024-01-14' }, period)).toEqual({
      start: '2024-01-01',
      end: '2024-01-14',
    });
    expect(parseDate('Sprint', '2024-01-01 -> 2024-01-14', period)).toEqual({ start: '2024-01-01', end: '2024-01-14' });
    expect(parseDate('Sprint', '2024-01-01->2024-01-01', period)).toEqual({ start: '2024-01-01', end: '2024-01-01' });
    expect(parseDate('Sprint', null, period)).toBeNull();
  });

  it('takes datetimes when the time option is also set', () => {
    expect(parseDate('Slot', '2024-01-01 09:00:00 -> 2024-01-01 10:30:00', periodWithTime)).toEqual({
      start: '2024-01-01T09:00:00',
      end: '2024-01-01T10:30:00',
    });
    // A bare end date covers its whole day.
    expect(parseDate('Slot', { start: '2024-01-01T09:00:00', end: '2024-01-01' }, periodWithTime)).toEqual({
      start: '2024-01-01T09:00:00',
      end: '2024-01-01',
    });
    expectRefused(() => parseDate('Sprint', '2024-01-01 09:00:00 -> 2024-01-02', period), 'Sprint', /no time option/);
  });

  it('refuses an end before the start', () => {
    expectRefused(() => parseDate('Sprint', { start: '2024-01-14', end: '2024-01-01' }, period), 'Sprint', /end is not before/);
    expectRefused(
      () => parseDate('Slot', '2024-01-01T10:00:00 -> 2024-01-01T09:59:59', periodWithTime),
      'Slot',
      /end is not before/,
    );
  });

  it('needs both bounds and no other keys', () => {
    expectRefused(() => parseDate('Sprint', { start: '2024-01-01' }, period), 'Sprint', /both start and end/);
    expectRefused(() => parseDate('Sprint', { start: '2024-01-01', end: null }, period), 'Sprint', /both start and end/);
    expectRefused(
      () => parseDate('Sprint', { start: '2024-01-01', end: '2024-01-02', note: 'x' }, period),
      'Sprint',
      /unknown key note/,
    );
  });

  it.each([['2024-01-01'], ['2024-01-01 -> '], ['-> 2024-01-01'], ['2024-01-01 -> 2024-02-30'], [['2024-01-01', '2024-01-02']], [5]])(
    'refuses %j',
    (value) => {
      expectRefused(() => parseDate('Sprint', value, period), 'Sprint');
    },
  );
});
