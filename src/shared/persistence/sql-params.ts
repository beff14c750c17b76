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

/** `%text%` for (I)LIKE: `text` as a plain substring, its pattern characters escaped. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
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
