import pg from 'pg';

/** PostgreSQL's type oid of `timestamptz`. */
const TIMESTAMPTZ = 1184;

/**
 * The pool's type parsers: `pg`'s own, except a faster one for `timestamptz`
 * in text format. Every card row carries two timestamps, and on a listing
 * page `pg`'s general parser (a regular expression per value, then another for
 * the offset) was a tenth of the server's CPU (docs/PERFORMANCE.md, issue 15,
 * fourth pass).
 */
export const poolTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    if (oid === TIMESTAMPTZ && format !== 'binary') return parseTimestamptz;
    return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
  },
};

const pgTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

/** A timestamptz the text parser cannot read: the session wrote it in another DateStyle. */
export class UnreadableTimestampError extends Error {}

/**
 * pg's own parser, which answers null for what it cannot read (a DateStyle
 * other than ISO: `25.11.2026 08:59:00 UTC`): that null became a 500 far
 * from its cause, or 1970-01-01 in JSON. It fails here instead, naming it.
 * (SQL NULL never reaches a parser.) The connections pin DateStyle=ISO
 * (data-source.ts); this is for one that does not.
 */
function generalTimestamptz(text: string): Date | number {
  const value = pgTimestamptz(text);
  if (value === null) {
    throw new UnreadableTimestampError(`a timestamptz came as ${JSON.stringify(text)}, not in the ISO DateStyle the connections set (DateStyle=ISO)`);
  }
  return value;
}

/**
 * A `timestamptz` as PostgreSQL writes it in the ISO date style:
 * `2026-11-25 08:59:00.123456+00`, the fraction optional, the offset `±HH`
 * or `±HH:MM`. Read digit by digit; anything else (another date style, BC,
 * infinity, a five-digit year, an offset with seconds) goes to `pg`'s own
 * parser, so the result is always the one that parser gives; a text it
 * cannot read either is an error, never null.
 */
export function parseTimestamptz(text: string): Date | number {
  const n = text.length;
  if (n < 22 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH || text.charCodeAt(10) !== SPACE) {
    return generalTimestamptz(text);
  }
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return generalTimestamptz(text);
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  // Years below 100 would be read as 19xx by Date.UTC.
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return generalTimestamptz(text);
  let i = 19;
  let millis = 0;
  if (text.charCodeAt(i) === DOT) {
    // Up to six digits of fraction; milliseconds are its first three (truncated, as pg's parser does).
    const start = ++i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    const length = i - start;
    if (length === 0 || length > 6) return generalTimestamptz(text);
    millis = digits(text, start, Math.min(length, 3)) * 10 ** Math.max(0, 3 - length);
  }
  const offset = offsetMinutes(text, i);
  if (offset === undefined) return generalTimestamptz(text);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offset * 60_000);
}

/** `±HH` or `±HH:MM` from `at` to the end, in minutes east of UTC; undefined for anything else. */
function offsetMinutes(text: string, at: number): number | undefined {
  const rest = text.length - at;
  if (rest !== 3 && rest !== 6) return undefined;
  const sign = text.charCodeAt(at) === PLUS ? 1 : text.charCodeAt(at) === DASH ? -1 : 0;
  const hours = digits(text, at + 1, 2);
  if (sign === 0 || hours < 0) return undefined;
  if (rest === 3) return sign * hours * 60;
  const minutes = digits(text, at + 4, 2);
  if (text.charCodeAt(at + 3) !== COLON || minutes < 0) return undefined;
  return sign * (hours * 60 + minutes);
}

/** The decimal number of `length` digits at `start`; -1 if one is not a digit. */
function digits(text: string, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const c = text.charCodeAt(i);
    if (!isDigit(c)) return -1;
    value = value * 10 + (c - ZERO);
  }
  return value;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= ZERO + 9;
}

const ZERO = 48;
const DASH = 45;
const PLUS = 43;
const SPACE = 32;
const COLON = 58;
const DOT = 46;
