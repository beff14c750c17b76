/**
 * Characters a name shown to other people may not hold (consent page,
 * developer page, account page): every invisible format character (Unicode
 * category Cf) — the bidi controls U+202A–U+202E, U+2066–U+2069, U+200E,
 * U+200F and U+061C, which reorder the text around them ("Photo Printer" +
 * U+202E turned the platform's own sentence after it backwards), and the
 * zero-width space, joiners, word joiner, BOM and soft hyphen, which let one
 * name pass for another — and control characters and line or paragraph
 * separators (Cc, Zl, Zp), which start a new bidi paragraph. The price: an
 * emoji sequence joined by U+200D or a subdivision flag (tag characters) is
 * refused too. Also every other default-ignorable code point (combining
 * grapheme joiner U+034F, Hangul fillers U+115F/U+3164, variation
 * selectors…), which draw as nothing; but for the emoji/text presentation
 * selectors U+FE0E and U+FE0F, which ❤️ and other common emoji carry.
 * And the braille pattern blank U+2800: a symbol to Unicode, so neither
 * whitespace (trim keeps it) nor ignorable, but it draws as a space, so a
 * name of nothing else would show as blank.
 */
const DECEPTIVE = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\u2800]|(?![\uFE0E\uFE0F])\p{Default_Ignorable_Code_Point}/u;

/** What a 400 says of a name with such a character. */
export const DECEPTIVE_NAME_MESSAGE = 'must not contain invisible, control or text-direction characters (such as U+202E or U+200B)';

/** Whether `name` holds a character that could disguise it or the text around it (DECEPTIVE_NAME_MESSAGE). */
export function hasDeceptiveCharacter(name: string): boolean {
  return DECEPTIVE.test(name);
}
