import { CARD_STATES, type CardState, type TimeSpan } from '../../card-hierarchy/index.js';
import { daysInMonth, isCalendarDate, isDecimalNumber, isTimeOfDay } from '../../fields/index.js';
import type { FilterValue } from './filter.ast.js';
import { FilterError } from './filter.errors.js';

// Numbers, days and times are read by the fields' own grammar (fields' value-grammar.ts), so a value a field takes is one the filter takes.
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const RELATIVE = /^([+-])(\d{1,4})([dwmy])$/i;
const HOURS_AND_MINUTES = /^\d\d:\d\d$/;
/** An instant, read lower-cased: a day, `t`, hours and minutes, optional seconds and fraction (at most microseconds), optional `z` or offset. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})t(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(z|[+-]\d{2}:\d{2})?$/;
/** A day then `T`: an instant, well written or not. */
const DAY_THEN_T = /^\d{4}-\d{2}-\d{2}t/i;
const MICROS_PER_DAY = 86_400_000_000n;
/** The first instant past 9999-12-31, in microseconds since 1970. */
const PAST_9999 = BigInt(Date.UTC(10000, 0, 1)) * 1000n;
/** The first instant of 0001-01-01, in microseconds since 1970. */
const YEAR_1 = BigInt(new Date('0001-01-01T00:00:00Z').getTime()) * 1000n;
const TRUE = new Set(['true', 'yes', '1']);
const FALSE = new Set(['false', 'no', '0']);

function textOf(v: FilterValue, expected: string): string {
  if (v.kind !== 'text') throw new FilterError(v.position, expected, `expected ${expected}, found a user`);
  return v.text.trim();
}

export function numberValue(v: FilterValue): number {
  const expected = 'a number';
  const t = textOf(v, expected);
  const n = isDecimalNumber(t) ? Number(t) : NaN;
  if (!Number.isFinite(n)) throw new FilterError(v.position, expected, `expected ${expected}, found "${t}"`);
  return n === 0 ? 0 : n;
}

/** A ref or a level: a whole number. */
export function wholeValue(v: FilterValue): number {
  const expected = 'a whole number';
  const t = textOf(v, expected);
  if (!/^\d{1,15}$/.test(t)) throw new FilterError(v.position, expected, `expected ${expected}, found "${t}"`);
  return Number(t);
}

export function boolValue(v: FilterValue): boolean {
  const expected = 'true or false';
  const written = textOf(v, expected);
  const t = written.toLowerCase();
  if (TRUE.has(t)) return true;
  if (FALSE.has(t)) return false;
  throw new FilterError(v.position, expected, `expected ${expected}, found "${written}"`);
}

export function stateValue(v: FilterValue): CardState {
  const expected = `a state (${CARD_STATES.join(', ')})`;
  const written = textOf(v, expected);
  const state = CARD_STATES.find((s) => s === written.toLowerCase());
  if (!state) throw new FilterError(v.position, expected, `expected ${expected}, found "${written}"`);
  return state;
}

/**
 * A time of day as a time field stores it, HH:MM:SS. Unlike a field's value
 * the filter's may leave out the seconds (docs/FILTERS.md: a time is HH:MM
 * or HH:MM:SS), which then are :00; past that it is the field's own rule.
 */
export function timeValue(v: FilterValue): string {
  const expected = 'a time HH:MM or HH:MM:SS';
  const t = textOf(v, expected);
  const time = HOURS_AND_MINUTES.test(t) ? `${t}:00` : t;
  if (!isTimeOfDay(time)) throw new FilterError(v.position, expected, `expected ${expected}, found "${t}"`);
  return time;
}

function formatDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** `today` moved by n days, weeks, months or years; a month move keeps the day, or the month's last one. */
function shiftDay(today: string, sign: number, n: number, unit: string): string {
  const [y, m, d] = today.split('-').map(Number);
  if (unit === 'd' || unit === 'w') {
    const date = new Date(Date.UTC(y, m - 1, d));
    date.setUTCDate(date.getUTCDate() + sign * n * (unit === 'w' ? 7 : 1));
    return formatDay(date);
  }
  const months = y * 12 + (m - 1) + sign * n * (unit === 'y' ? 12 : 1);
  const year = Math.floor(months / 12);
  const month = (months % 12) + 1;
  const day = Math.min(d, daysInMonth(year, month));
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A calendar day `YYYY-MM-DD`: written out, `today`, or relative to today (`-7d`, `+2w`, `+1m`, `-1y`). */
export function dayValue(v: FilterValue, today: string): string {
  const expected = 'a date YYYY-MM-DD, today, or a relative date such as -7d, +2w, +1m, -1y';
  // Read in any case (`Today`, `-7D`); an error quotes the text as written.
  const written = textOf(v, expected);
  const t = written.toLowerCase();
  if (t === 'today') return today;
  const rel = RELATIVE.exec(t);
  if (rel) {
    const shifted = shiftDay(today, rel[1] === '-' ? -1 : 1, Number(rel[2]), rel[3].toLowerCase());
    if (/^\d{4}-/.test(shifted) && shifted >= '0001-01-01') return shifted;
  }
  const m = DAY.exec(t);
  if (m && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) return t;
  throw new FilterError(v.position, expected, `expected ${expected}, found "${written}"`);
}

/**
 * The span of time a `created` or `updated` value names: a day (as
 * `dayValue` reads it) from its first instant to the next day's, or an
 * instant for as long as its precision (`…T10:00Z` the minute, `…T10:00:30Z`
 * the second, `…T10:00:30.250Z` the millisecond), so that every value
 * compares as a day does. Without `Z` or an offset the instant is UTC, as
 * every time the API answers.
 */
export function timeSpanValue(v: FilterValue, today: string): TimeSpan {
  const written = v.kind === 'text' ? v.text.trim() : '';
  const expected = 'an instant YYYY-MM-DDTHH:MM[:SS[.ffffff]] with Z, an offset ±HH:MM or no zone (UTC), in the years 0001 to 9999 once in UTC';
  const m = INSTANT.exec(written.toLowerCase());
  // A day then `T` is an instant, well written or not: its error says what an instant is.
  if (!m && !DAY_THEN_T.test(written)) return daySpan(dayValue(v, today));
  if (!m) throw new FilterError(v.position, expected, `expected ${expected}, found "${written}"`);
  const [, year, month, day, hour, minute, second, fraction, zone] = m;
  const offset = zone && zone !== 'z' ? (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4))) : 0;
  const valid =
    isCalendarDate(Number(year), Number(month), Number(day)) &&
    Number(hour) < 24 && Number(minute) < 60 && Number(second ?? 0) < 60 &&
    Math.abs(offset) < 24 * 60 && Number(zone?.slice(4) ?? 0) < 60;
  const start = valid ? micros(`${year}-${month}-${day}T${hour}:${minute}:${second ?? '00'}Z`) + BigInt((fraction ?? '').padEnd(6, '0')) - BigInt(offset) * 60_000_000n : 0n;
  if (!valid || start < YEAR_1 || start >= PAST_9999) throw new FilterError(v.position, expected, `expected ${expected}, found "${written}"`);
  const length = second === undefined ? 60_000_000n : 10n ** BigInt(6 - (fraction ?? '').length);
  return { start: isoMicros(start), end: start + length >= PAST_9999 ? 'infinity' : isoMicros(start + length) };
}

/** A UTC day `YYYY-MM-DD` as the span from its first instant to the next day's. */
function daySpan(day: string): TimeSpan {
  const start = micros(`${day}T00:00:00Z`);
  return { start: isoMicros(start), end: start + MICROS_PER_DAY >= PAST_9999 ? 'infinity' : isoMicros(start + MICROS_PER_DAY) };
}

function micros(isoSeconds: string): bigint {
  return BigInt(new Date(isoSeconds).getTime()) * 1000n;
}

/** An instant in microseconds since 1970 as ISO 8601 UTC text with six decimals (years 0001 to 9999). */
function isoMicros(at: bigint): string {
  const fraction = ((at % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const seconds = Number((at - fraction) / 1_000_000n);
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(fraction).padStart(6, '0')}Z`;
}

/** The time of an instant as `INSTANT` reads it (any number of decimals: a near miss is still one), with its zone or none. */
const TIME_OF_INSTANT = /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:\d{2})?$/i;

/**
 * Whether two words a space apart are one instant split by it: an instant
 * without a zone then `HH:MM` (its offset's `+` sent unencoded in a query
 * string, where a `+` is a space: `'offset'`), or a day then an instant's
 * time (a space for its `T`: `'T'`).
 */
export function instantSplitBySpace(first: string, second: string): 'offset' | 'T' | undefined {
  const time = TIME_OF_INSTANT.exec(second);
  if (!time) return undefined;
  const firstTime = DAY_THEN_T.test(first) ? TIME_OF_INSTANT.exec(first.slice(11)) : null;
  if (firstTime && !firstTime[3] && !time[1] && !time[3]) return 'offset';
  return DAY.test(first) ? 'T' : undefined;
}

/** The UTC day of an instant, for `today`. */
export function utcDay(now: Date): string {
  return formatDay(now);
}
