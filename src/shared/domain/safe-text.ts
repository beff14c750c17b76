/** NUL, or a UTF-16 surrogate without its pair: PostgreSQL text can store neither. */
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EVERY_UNSAFE = new RegExp(UNSAFE.source, 'g');

/** What a 400 says of a string with such characters. */
export const UNSAFE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/** Whether `text` holds a character PostgreSQL cannot store (UNSAFE_TEXT_MESSAGE). */
export function hasUnsafeText(text: string): boolean {
  return UNSAFE.test(text);
}

/** `text` with each such character replaced by U+FFFD, for text that is only shown (a spreadsheet's sample cells). */
export function withUnsafeReplaced(text: string): string {
  return hasUnsafeText(text) ? text.replace(EVERY_UNSAFE, '\uFFFD') : text;
}

/** A C0 control character, DEL, or an unpaired surrogate: names (fields, models, group types, groups) are printable. */
const CONTROL = /[\u0000-\u001f\u007f]|\p{Cs}/u;

/** What a 400 says of a name with such characters. */
export const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters';

/** Whether a name holds a character names may not (CONTROL_CHARACTER_MESSAGE). */
export function hasControlCharacter(name: string): boolean {
  return CONTROL.test(name);
}

/**
 * A field's name is a key of the card JSON's `attributes` and of request
 * bodies, and `__proto__` is the one key a JavaScript object cannot hold as
 * its own through assignment (and a body's top-level `__proto__` is refused
 * as an unknown parameter): a field of that name could be created but never
 * shown or set by name.
 */
export const RESERVED_NAME_MESSAGE = 'must not be "__proto__", which JSON objects cannot carry as a key here';

export function isReservedName(name: string): boolean {
  return name.trim() === '__proto__';
}

/**
 * Whether `text` has more than `max` characters. Limits on titles, names and
 * texts count code points, as PostgreSQL's char_length() does: an emoji or
 * a CJK character beyond the Basic Multilingual Plane is one character,
 * not the two UTF-16 units JavaScript's `length` counts. Stops early.
 */
export function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

/** The first `max` characters of `text`, counted as `longerThan` counts them: a pair of surrogates is never cut in two. */
export function firstCharacters(text: string, max: number): string {
  if (!longerThan(text, max)) return text;
  let end = 0;
  let count = 0;
  for (const character of text) {
    if (++count > max) break;
    end += character.length;
  }
  return text.slice(0, end);
}
