import { describe, expect, it } from '@jest/globals';
import { isDecimalNumber, isTimeOfDay } from '../../fields/index.js';
import type { FilterValue } from './filter.ast.js';
import { FilterError } from './filter.errors.js';
import { boolValue, dayValue, numberValue, stateValue, timeSpanValue, timeValue } from './filter-values.js';

const text = (t: string): FilterValue => ({ kind: 'text', text: t, quoted: false, position: 0 });

/** The value the filter reads, or undefined when it refuses it. */
function read<T>(parse: (v: FilterValue) => T, t: string): T | undefined {
  try {
    return parse(text(t));
  } catch (e) {
    if (e instanceof FilterError) return undefined;
    throw e;
  }
}

const two = (n: number) => String(n).padStart(2, '0');

describe('filter values read as fields read them', () => {
  it('takes every time a time field takes, as it is, and nothing else of that shape', () => {
    for (let h = 0; h < 30; h++) {
      for (const m of [0, 7, 59, 60, 99]) {
        for (const s of [0, 30, 59, 60]) {
          const t = `${two(h)}:${two(m)}:${two(s)}`;
          expect([t, read(timeValue, t)]).toEqual([t, isTimeOfDay(t) ? t : undefined]);
        }
      }
    }
  });

  it('takes HH:MM as that minute of a time field, :00 seconds', () => {
    expect(read(timeValue, '09:30')).toBe('09:30:00');
    expect(read(timeValue, '23:59')).toBe('23:59:00');
    for (const t of ['24:00', '12:60', '9:30', '09:3', '09:30:0', '09.30', 'T09:30']) expect([t, read(timeValue, t)]).toEqual([t, undefined]);
  });

  it('takes the numbers a number field takes from text', () => {
    for (const t of ['3', '-0.5', '+.5', '1e3', '2.', '0x10', 'Infinity', '1e', '', '1_000']) {
      expect([t, read(numberValue, t) !== undefined]).toEqual([t, isDecimalNumber(t) && Number.isFinite(Number(t))]);
    }
  });

  it('takes the days that exist, leap days by the Gregorian rule', () => {
    const day = (t: string) => read((v) => dayValue(v, '2026-01-31'), t);
    expect(day('2024-02-29')).toBe('2024-02-29');
    expect(day('2000-02-29')).toBe('2000-02-29');
    expect(day('1900-02-29')).toBeUndefined();
    expect(day('2026-04-31')).toBeUndefined();
    expect(day('0000-01-01')).toBeUndefined();
    expect(day('+1m')).toBe('2026-02-28');
  });

  it('reads days, bools and states in any case, and quotes a value it refuses as written', () => {
    expect(read((v) => dayValue(v, '2026-01-31'), 'TODAY')).toBe('2026-01-31');
    expect(read((v) => dayValue(v, '2026-01-31'), '-1D')).toBe('2026-01-30');
    expect(read(boolValue, 'Yes')).toBe(true);
    expect(read(stateValue, 'In_Progress')).toBe('in_progress');
    const refusal = (parse: (v: FilterValue) => unknown, t: string) => () => parse(text(t));
    expect(refusal((v) => dayValue(v, '2026-01-31'), '2026-03-29T02:30:00')).toThrow('found "2026-03-29T02:30:00"');
    expect(refusal(boolValue, 'Maybe')).toThrow('found "Maybe"');
    expect(refusal(stateValue, 'Open')).toThrow('found "Open"');
  });
});

describe('the span of time a created or updated value names', () => {
  const span = (t: string) => read((v) => timeSpanValue(v, '2026-03-15'), t);

  it('is a whole UTC day for a day, today or a relative day', () => {
    expect(span('2026-03-01')).toEqual({ start: '2026-03-01T00:00:00.000000Z', end: '2026-03-02T00:00:00.000000Z' });
    expect(span('today')).toEqual({ start: '2026-03-15T00:00:00.000000Z', end: '2026-03-16T00:00:00.000000Z' });
    expect(span('-1d')).toEqual({ start: '2026-03-14T00:00:00.000000Z', end: '2026-03-15T00:00:00.000000Z' });
    expect(span('9999-12-31')).toEqual({ start: '9999-12-31T00:00:00.000000Z', end: 'infinity' });
    expect(span('0001-01-01')).toEqual({ start: '0001-01-01T00:00:00.000000Z', end: '0001-01-02T00:00:00.000000Z' });
  });

  it('is an instant for as long as its precision: a minute, a second, a fraction', () => {
    expect(span('2026-03-01T10:15Z')).toEqual({ start: '2026-03-01T10:15:00.000000Z', end: '2026-03-01T10:16:00.000000Z' });
    expect(span('2026-03-01T10:15:30Z')).toEqual({ start: '2026-03-01T10:15:30.000000Z', end: '2026-03-01T10:15:31.000000Z' });
    expect(span('2026-03-01T10:15:30.25Z')).toEqual({ start: '2026-03-01T10:15:30.250000Z', end: '2026-03-01T10:15:30.260000Z' });
    expect(span('2026-03-01T10:15:30.123Z')).toEqual({ start: '2026-03-01T10:15:30.123000Z', end: '2026-03-01T10:15:30.124000Z' });
    expect(span('2026-03-01T10:15:30.999999Z')).toEqual({ start: '2026-03-01T10:15:30.999999Z', end: '2026-03-01T10:15:31.000000Z' });
    // Read in any case, as days are; without a zone it is UTC, as every time the API answers.
    expect(span('2026-03-01t10:15:30z')).toEqual(span('2026-03-01T10:15:30Z'));
    expect(span('2026-03-01T10:15:30')).toEqual(span('2026-03-01T10:15:30Z'));
  });

  it('moves an offset to UTC, across days and years', () => {
    expect(span('2026-03-01T01:00+02:00')).toEqual({ start: '2026-02-28T23:00:00.000000Z', end: '2026-02-28T23:01:00.000000Z' });
    expect(span('2026-12-31T23:30:00-01:30')).toEqual({ start: '2027-01-01T01:00:00.000000Z', end: '2027-01-01T01:00:01.000000Z' });
    expect(span('9999-12-31T23:59:59.999999Z')).toEqual({ start: '9999-12-31T23:59:59.999999Z', end: 'infinity' });
    expect(span('0001-01-01T00:00:00.000001Z')).toEqual({ start: '0001-01-01T00:00:00.000001Z', end: '0001-01-01T00:00:00.000002Z' });
  });

  it('refuses instants that are not, or lie outside the years 0001 to 9999', () => {
    for (const t of [
      '2026-02-30T10:00Z',
      '2026-03-01T24:00Z',
      '2026-03-01T10:60Z',
      '2026-03-01T10:00:60Z',
      '2026-03-01T10Z',
      '2026-03-01T10:00:00.1234567Z',
      '2026-03-01T10:00+24:00',
      '2026-03-01T10:00+01:60',
      '2026-03-01T10:00+0100',
      '2026-03-01 10:00',
      '0001-01-01T00:30+01:00',
      '9999-12-31T23:30-01:00',
    ]) {
      expect([t, span(t)]).toEqual([t, undefined]);
    }
  });

  it('names the instant form for a day followed by T, whatever is wrong after it', () => {
    for (const t of ['2026-03-01T10:00+0100', '2026-03-01T10:00:00.1234567Z', '2026-03-01Tnoon']) {
      expect(() => timeSpanValue(text(t), '2026-03-15')).toThrow(`expected an instant YYYY-MM-DDTHH:MM[:SS[.ffffff]] with Z, an offset ±HH:MM or no zone (UTC), in the years 0001 to 9999 once in UTC, found "${t}"`);
    }
  });

  it('says what it expected, quoting the value as written', () => {
    expect(() => timeSpanValue(text('2026-03-01T25:00Z'), '2026-03-15')).toThrow(
      'expected an instant YYYY-MM-DDTHH:MM[:SS[.ffffff]] with Z, an offset ±HH:MM or no zone (UTC), in the years 0001 to 9999 once in UTC, found "2026-03-01T25:00Z"',
    );
  });
});
