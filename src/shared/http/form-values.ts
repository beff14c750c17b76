/**
 * class-transformer `@Transform`s for DTO properties that may come from form
 * fields or the query string (DESIGN.md §2), where numbers and booleans arrive
 * as text. Only their plain decimal and `true`/`false` forms are converted;
 * anything else is left for the validators to refuse (400 naming the field).
 */
// A negative number too, so that `position=-1` is refused for being below the
// minimum rather than for not being a number (which also failed the maximum).
export const formInt = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value);

export const formBool = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);
