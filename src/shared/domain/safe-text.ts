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
