import type { DateValue, FieldOptions, PeriodValue } from './field-value.types.js';
import { isTimeOfDay } from './time.parser.js';
import { invalidValue } from './field-value.errors.js';
import { isPlainObject } from './json.guards.js';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}:\d{2}:\d{2}))?$/;
const PERIOD_ARROW = /^(.+?)\s*->\s*(.+)$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a month (1 to 12) of the Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}

/** A day that exists, from year 1 on (the days a date field and the filter take). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

type ParsedDate = { date: string; time?: string };

function readDate(text: string): ParsedDate | null {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return null;
  const [, y, m, d, time] = match;
  if (!isCalendarDate(Number(y), Number(m), Number(d))) return null;
  if (time !== undefined && !isTimeOfDay(time)) return null;
  return { date: `${y}-${m}-${d}`, time };
}

function format(parsed: ParsedDate): DateValue {
  return parsed.time === undefined ? parsed.date : `${parsed.date}T${parsed.time}`;
}

function expectedDate(options: FieldOptions): string {
  return options.time ? 'YYYY-MM-DD or YYYY-MM-DD HH:MM:SS' : 'YYYY-MM-DD';
}

/** `part` names the period bound being read; undefined for a single date. */
function parseOne(field: string, input: unknown, options: FieldOptions, part?: 'start' | 'end'): ParsedDate {
  const subject = part ? `${part} to be a date` : 'a date';
  const parsed = typeof input === 'string' ? readDate(input) : null;
  if (parsed === null) throw invalidValue(field, `expected ${subject} ${expectedDate(options)}`);
  if (parsed.time !== undefined && !options.time) {
    throw invalidValue(field, `expected ${subject} YYYY-MM-DD without a time (the field has no time option)`);
  }
  return parsed;
}

function parsePeriod(field: string, input: unknown, options: FieldOptions): PeriodValue {
  const expected = `expected a period {"start": "${expectedDate(options)}", "end": …} or "start -> end"`;
  let start: unknown;
  let end: unknown;
  if (typeof input === 'string') {
    const match = PERIOD_ARROW.exec(input.trim());
    if (!match) throw invalidValue(field, expected);
    [, start, end] = match;
  } else if (isPlainObject(input)) {
    const unknownKeys = Object.keys(input).filter((key) => key !== 'start' && key !== 'end');
    if (unknownKeys.length > 0) throw invalidValue(field, `${expected}; unknown key ${unknownKeys[0]}`);
    ({ start, end } = input);
    if (start === undefined || start === null || end === undefined || end === null) {
      throw invalidValue(field, `${expected}; both start and end are required`);
    }
  } else {
    throw invalidValue(field, expected);
  }
  const from = parseOne(field, start, options, 'start');
  const to = parseOne(field, end, options, 'end');
  // A bare date covers the whole day, so a same-day end without a time is never "before" a start time.
  if (`${to.date}T${to.time ?? '23:59:59'}` < `${from.date}T${from.time ?? '00:00:00'}`) {
    throw invalidValue(field, 'expected a period whose end is not before its start');
  }
  return { start: format(from), end: format(to) };
}

export function parseDate(field: string, input: unknown, options: FieldOptions): DateValue | PeriodValue | null {
  if (input === null) return null;
  if (options.period) return parsePeriod(field, input, options);
  return format(parseOne(field, input, options));
}
