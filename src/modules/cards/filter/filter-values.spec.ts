import { describe, expect, it } from '@jest/globals';
import { isDecimalNumber, isTimeOfDay } from '../../fields/index.js';
import type { FilterValue } from './filter.ast.js';
import { FilterError } from './filter.errors.js';
import { boolValue, dayValue, numberValue, stateValue, timeValue } from './filter-values.js';

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
