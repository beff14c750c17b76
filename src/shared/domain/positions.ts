/**
 * The largest position a request's is brought down to: far past any list's
 * length, and within PostgreSQL's integer, so the statements that lock and
 * shift siblings never see a number they cannot hold.
 */
export const MAX_POSITION = 1_000_000_000;

/**
 * A 0-based position given in a request (relocate, add-to-group, a group's
 * place): any integer, as a number (1e20 and -2**60 too: a JSON number of an
 * integer value, whatever its size) or as decimal digits. DESIGN.md §4
 * clamps positions to the siblings' range, so a client may send -1 for
 * "first" or a huge number for "last": the value is brought into
 * [0, MAX_POSITION] here and clamped to the list's length where it is used.
 * Absent (or null) → undefined, which means last; anything else (1.5, "x",
 * "1e3") → NaN, which the caller refuses with a 400 naming the property.
 */
export function requestedPosition(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  // A number or digits past the doubles' range (JSON's 1e400) read as ±Infinity:
  // an integer too large to hold, whose sign is all the clamp needs.
  let n: number;
  if (typeof value === 'string') n = /^-?\d+$/.test(value) ? Number(value) : NaN;
  else n = typeof value === 'number' && (Number.isInteger(value) || Math.abs(value) === Infinity) ? value : NaN;
  return Number.isNaN(n) ? NaN : Math.min(Math.max(n, 0), MAX_POSITION);
}

/** What a 400 says of a position that is not an integer. */
export const POSITION_MESSAGE = 'must be an integer (clamped to the list: 0 or less is first, past the end is last)';

/**
 * A position given in a request (`requestedPosition`); absent → undefined.
 * Not an integer: throws what `refusal` makes of POSITION_MESSAGE (each
 * module's own 400 naming the property).
 */
export function readPosition(value: unknown, refusal: (message: string) => Error): number | undefined {
  const position = requestedPosition(value);
  if (Number.isNaN(position)) throw refusal(POSITION_MESSAGE);
  return position;
}

/** How OpenAPI describes such a position. */
export const POSITION_DESCRIPTION = '0-based; clamped to the list (0 or less is first, past the end is last)';
