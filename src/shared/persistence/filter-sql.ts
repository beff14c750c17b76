/**
 * Collects the parameters of one SQL statement assembled from parts written by
 * several modules (the filter query). Each part adds its values here and puts
 * the returned placeholder in its SQL text, so values never become SQL text.
 */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and returns its placeholder (`$n`), with a cast when given (`$n::bigint[]`). */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }

  /** Drops the values added after the first `length` (a part whose SQL text is dropped too). */
  truncate(length: number): void {
    this.values.length = length;
  }
}

/**
 * SQL expressions naming the columns of the card row a filter is evaluated
 * on (for example `c.id`). Card-hierarchy, which owns the row, supplies them;
 * other modules' predicates correlate on them and read nothing else of it.
 */
export interface FilterCardColumns {
  id: string;
  projectId: string;
  modelId: string;
}

/** Comparison of a filter term once `!=` has become `not =`. */
export type FilterOrderOp = '=' | '<' | '<=' | '>' | '>=';

/** How a text is matched, ignoring case: the whole value, or a part of it. */
export type FilterTextMatch = 'equals' | 'contains';

/** `text` for (I)LIKE as plain characters: its pattern characters escaped. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `%text%` for (I)LIKE: `text` as a plain substring, its pattern characters escaped. */
function likeContains(text: string): string {
  return `%${likeLiteral(text)}%`;
}

const SIGMA = /[σςΣ]/g;
/** lower() with a word's final `ς` read as `σ`, as JavaScript's toLowerCase and a reader make the two one letter. */
const sigmaFolded = (expr: string) => `translate(lower(${expr}), 'ς', 'σ')`;

/**
 * `expr` equals / contains `text`, ignoring case (docs/FILTERS.md).
 * PostgreSQL's lower() and ILIKE fold each character on its own, so `Σ` is
 * always `σ` and a word's final `ς` stays `ς`: "οδος" (typed as Greek is
 * written) never found "ΟΔΟΣ", nor "ΟΔΟΣ" a stored "οδος". A text holding a
 * sigma is compared with ς and σ as one letter: exactly by the folded
 * comparison, found first by an ILIKE with any character where a sigma is
 * (what the title's trigram index serves). Any other text compares as
 * before; a text without a sigma matches the same whichever way the
 * value's sigmas are folded.
 */
export function textMatchSql(expr: string, match: FilterTextMatch, text: string, params: SqlParams): string {
  if (!/[σςΣ]/.test(text)) {
    return match === 'equals' ? `lower(${expr}) = lower(${params.add(text)})` : `${expr} ILIKE ${params.add(likeContains(text))}`;
  }
  const shape = likeLiteral(text).replace(SIGMA, '_');
  if (match === 'equals') {
    return `(${expr} ILIKE ${params.add(shape)} AND ${sigmaFolded(expr)} = ${sigmaFolded(params.add(text))})`;
  }
  return `(${expr} ILIKE ${params.add(`%${shape}%`)} AND ${sigmaFolded(expr)} LIKE ${sigmaFolded(params.add(likeContains(text)))})`;
}

/**
 * `column` is one of `ids`: `= $n` for one id, `= ANY($n)` otherwise (none:
 * false). With a single value the planner sees an equality, which it
 * can combine with a unique key (a card's membership in one group is one
 * row) and estimate from the column's statistics.
 */
export function idIn(column: string, ids: number[], params: SqlParams): string {
  return ids.length === 1 ? `${column} = ${params.add(ids[0], 'bigint')}` : `${column} = ANY(${params.add(ids, 'bigint[]')})`;
}
