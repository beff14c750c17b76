import { idFromText } from '../domain/ids.js';
import { jsonDepth, MAX_JSON_DEPTH } from './body-limits.js';

/**
 * class-transformer `@Transform`s for DTO properties that may come from form
 * fields or the query string (DESIGN.md §2), where numbers and booleans arrive
 * as text. Only their plain decimal and `true`/`false` forms are converted;
 * anything else is left for the validators to refuse (400 naming the field).
 */
// A negative number too, so that `position=-1` is read as the number it is (a
// position is clamped) rather than refused for not being a number.
export const formInt = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value);

/**
 * An id property as text, read by the grammar of a path id (idFromText: no
 * sign, no leading zeros, within 53 bits); any other text stays as sent, for
 * `@IsInt()` to refuse.
 */
export const formId = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? (idFromText(value) ?? value) : value);

export const formBool = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);

/**
 * An object sent as one form field of JSON text (`attributes={"Estimate":5}`),
 * as the importer's `mapping` may be: a form has no other way to carry one
 * (`extended: false` forms do not nest). Parsed when it is a JSON object no
 * deeper than a JSON body may be; anything else stays as sent, for the
 * property's rules to refuse.
 */
export const formJsonObject = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string' || !value.trimStart().startsWith('{')) return value;
  try {
    const parsed = JSON.parse(value) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && jsonDepth(parsed) <= MAX_JSON_DEPTH ? parsed : value;
  } catch {
    return value;
  }
};
