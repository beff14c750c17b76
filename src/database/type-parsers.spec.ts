import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import pg from 'pg';
import { parseTimestamptz, poolTypes, UnreadableTimestampError } from './type-parsers.js';

const general = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number | null;
const same = (text: string) => expect(parseTimestamptz(text)).toEqual(general(text));

/** A timestamptz as PostgreSQL writes it in the ISO date style, from its parts. */
const written = fc
  .record({
    year: fc.integer({ min: 100, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    offset: fc.record({ sign: fc.constantFrom('+', '-'), hours: fc.integer({ min: 0, max: 15 }), minutes: fc.option(fc.constantFrom(0, 15, 30, 45), { nil: undefined }) }),
  })
  .map((t) => {
    const two = (n: number) => String(n).padStart(2, '0');
    const offset = `${t.offset.sign}${two(t.offset.hours)}${t.offset.minutes === undefined ? '' : `:${two(t.offset.minutes)}`}`;
    return `${String(t.year).padStart(4, '0')}-${two(t.month)}-${two(t.day)} ${two(t.hour)}:${two(t.minute)}:${two(t.second)}${t.fraction === undefined ? '' : `.${t.fraction}`}${offset}`;
  });

describe('parseTimestamptz', () => {
  it('reads what PostgreSQL writes as pg’s own parser does: UTC, offsets, fractions of 1 to 6 digits', () => {
    expect(parseTimestamptz('2026-11-25 08:59:00.123456+00')).toEqual(new Date('2026-11-25T08:59:00.123Z'));
    expect(parseTimestamptz('2026-11-25 08:59:00+05:30')).toEqual(new Date('2026-11-25T03:29:00.000Z'));
    expect(parseTimestamptz('2026-01-01 00:00:00.5-03')).toEqual(new Date('2026-01-01T03:00:00.500Z'));
    for (const text of ['2026-11-25 08:59:00.1+00', '2026-11-25 08:59:00.12+00', '2026-11-25 08:59:00.999999+00', '0100-03-01 00:00:00+00']) same(text);
  });

  it('agrees with pg’s parser on random timestamps', () => {
    fc.assert(fc.property(written, (text) => expect(parseTimestamptz(text)).toEqual(general(text))), { numRuns: 2000, seed: 20261125 });
  });

  it('hands every other form to pg’s parser: infinity, BC, years below 100 or of five digits, offsets with seconds, other styles', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '2026-11-25 08:59:00+00 BC',
      '0099-11-25 08:59:00+00',
      '12026-11-25 08:59:00+00',
      '1890-01-01 00:00:00+00:53:28',
      '2026-11-25 08:59:00.1234567+00',
    ]) {
      same(text);
    }
  });

  it('fails, naming the text, on a timestamp written in a DateStyle other than ISO: never null (a 500 far away, or 1970-01-01)', () => {
    for (const text of ['2026-11-25T08:59:00Z', 'Wed Nov 25 08:59:00 2026 UTC', '25.11.2026 08:59:00.123 UTC', '25/11/2026 08:59:00 UTC', '11/25/2026 08:59:00 UTC']) {
      expect(general(text)).toBeNull();
      expect(() => parseTimestamptz(text)).toThrow(UnreadableTimestampError);
      expect(() => parseTimestamptz(text)).toThrow(JSON.stringify(text));
    }
  });

  it('is what the pool uses for timestamptz in text format, and pg’s own parser for every other type', () => {
    expect(poolTypes.getTypeParser(1184, 'text')).toBe(parseTimestamptz);
    expect(poolTypes.getTypeParser(1184)).toBe(parseTimestamptz);
    expect(poolTypes.getTypeParser(1114, 'text')).toBe(pg.types.getTypeParser(1114, 'text'));
    expect(poolTypes.getTypeParser(1184, 'binary')).toBe(pg.types.getTypeParser(1184, 'binary'));
  });
});
