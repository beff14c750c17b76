import { CARD_STATES, type CardState } from '../../card-hierarchy/index.js';
import { daysInMonth, isCalendarDate, isDecimalNumber, isTimeOfDay } from '../../fields/index.js';
import type { FilterValue } from './filter.ast.js';
import { FilterError } from './filter.errors.js';

// Numbers, days and times are read by the fields' own grammar (fields' value-grammar.ts), so a value a field takes is one the filter takes.
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const RELATIVE = /^([+-])(\d{1,4})([dwmy])$/i;
const HOURS_AND_MINUTES = /^\d\d:\d\d$/;
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

/** The UTC day of an instant, for `today`. */
export function utcDay(now: Date): string {
  return formatDay(now);
}
