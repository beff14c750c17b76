/**
 * The key for names and group titles that compare in any case (fields,
 * contexts, models, groups) where they are matched in JavaScript: by the
 * importer, and by the filter language's field and model names. Two texts
 * are the same when their keys are.
 *
 * The modules compare such names two ways.
 * PostgreSQL's lower() (the unique indexes, `findByTitle`, the field and
 * group type look-ups) maps each character on its own: with the libc
 * provider (the server's C.UTF-8, and PGlite) 'İ' is 'i' and 'Σ' is 'σ'
 * everywhere. JavaScript's toLowerCase() (grouping's `sameTitle`, which
 * refuses a second group of the "same" title) makes 'İ' 'i̇' (i and a
 * combining dot) and a word's last 'Σ' 'ς'. So "İTEM" and "item" are one
 * name to the database and two to JavaScript, and "ΟΔΟΣ" and "οδος" two to
 * the database and one to JavaScript. An importer folding one way only
 * decided in its check pass (and `dry_run`) what the write then refused: a
 * new field "İTEM" beside "item" (409 FIELDS.NAME_TAKEN), a group "οδος"
 * beside "ΟΔΟΣ" (409 GROUPING.DUPLICATE_GROUP_TITLE), a context "İTEM" taken
 * for a new type when "item" allows one group per card (409), and a card
 * in "İstanbul" told it would move to "istanbul".
 *
 * This key is JavaScript's lowercase with those two differences taken out
 * ('i̇' is 'i', 'ς' is 'σ'): texts the same to either side are the same to
 * the importer, which then writes an existing name or title as it is
 * stored, found by every look-up, and to a filter (a field "İTEM" stored
 * beside no "item" was an unknown field to `{item} = x`). (Unicode's only unconditional lowercase
 * mapping of more than one character is 'İ', and the only condition that
 * applies outside Lithuanian, Turkish and Azeri is the final sigma; the
 * database's C locale, which folds ASCII only, and ICU, which folds as
 * JavaScript does, are covered too.) Where several existing names share a
 * key, the one lower() folds as the name is taken first (`sameNamed`).
 */
export function foldCase(text: string): string {
  return text.toLowerCase().replace(/i\u0307/g, 'i').replace(/ς/g, 'σ');
}

/**
 * PostgreSQL's lower(), as the unique indexes fold names: one character at a
 * time, so 'İ' is 'i' and 'Σ' is 'σ' wherever it stands (the server's
 * C.UTF-8 and PGlite alike; they differ only on letters newer than their
 * libc's Unicode tables, which lower() leaves as they are, and PGlite's
 * leaves circled letters too). Unlike `foldCase`, 'ς' stays 'ς': 'ΟΔΟΣ' and
 * 'οδος' are two names.
 */
export function lowerCase(text: string): string {
  return text.replace(/Σ/g, 'σ').replace(/İ/g, 'i').toLowerCase();
}

/**
 * The items (of one scope of unique names) that `name` names: those whose
 * names lower() folds as it folds `name`, the way the unique index compares
 * them; only when there are none, those `foldCase` folds as it. A project may
 * hold a field 'ΟΔΟΣ' beside 'οδος' (lower(): 'οδοσ', 'οδος'): 'ΟΔΟΣ' and
 * 'Οδοσ' name the first only, 'οδος' the second only; and 'οδος' finds
 * 'ΟΔΟΣ' where no 'οδος' stands beside it.
 */
export function sameNamed<T>(items: readonly T[], name: string, nameOf: (item: T) => string): T[] {
  for (const fold of [lowerCase, foldCase]) {
    const key = fold(name);
    const found = items.filter((item) => fold(nameOf(item)) === key);
    if (found.length) return found;
  }
  return [];
}

/** The item whose name is `name` exactly, else the first `sameNamed` gives. */
export function findByName<T>(items: readonly T[], name: string, nameOf: (item: T) => string): T | undefined {
  const named = sameNamed(items, name, nameOf);
  return named.find((item) => nameOf(item) === name) ?? named[0];
}
