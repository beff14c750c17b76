/**
 * The typed syntax tree of a filter expression (DESIGN.md §7, docs/FILTERS.md).
 * Produced by `parseFilter`, with 0-based `position`s into the filter text so
 * that later checks (unknown field, bad value) can point at the right place.
 */

export const COMPARE_OPS = ['=', '!=', '>', '>=', '<', '<=', '~='] as const;
export type CompareOp = (typeof COMPARE_OPS)[number];

/** Names that always mean the card's own properties (a braced `{name}` is always a project field). */
export const BUILTIN_FIELDS = ['state', 'title', 'ref', 'hlevel', 'model', 'archived', 'created', 'updated', 'parent'] as const;
export type BuiltinField = (typeof BUILTIN_FIELDS)[number];

export type FieldName =
  | { kind: 'builtin'; name: BuiltinField; position: number }
  | { kind: 'custom'; name: string; position: number };

/** `@name` names a username; `@{…}` a username or a display name. */
export type UserRef = { kind: 'me' } | { kind: 'name'; name: string; displayName: boolean };

/**
 * A value as written. `text` covers words, numbers, dates, `today`, `-7d` and
 * quoted strings: what it means depends on the field it is compared with.
 */
export type FilterValue =
  | { kind: 'text'; text: string; quoted: boolean; position: number }
  | { kind: 'user'; user: UserRef; position: number };

export type FilterExpr =
  | { kind: 'all' }
  | { kind: 'and'; items: FilterExpr[] }
  | { kind: 'or'; items: FilterExpr[] }
  | { kind: 'not'; item: FilterExpr }
  /** A bare word or a quoted phrase: the title contains it. */
  | { kind: 'text'; text: string; position: number }
  /** `#123`: the card with that ref. */
  | { kind: 'ref'; ref: number; position: number }
  /** `#name`, `#{Group name}`: the card is in a group of that title. */
  | { kind: 'group'; name: string; position: number }
  /** `@user`, `@me`, `@{user name}`: the user is in one of the card's members fields. */
  | { kind: 'member'; user: UserRef; position: number }
  /** `field op value`. */
  | { kind: 'compare'; field: FieldName; op: CompareOp; opPosition: number; value: FilterValue; position: number }
  /** `value in field`: a multi-valued field contains the value. */
  | { kind: 'in'; value: FilterValue; field: FieldName; opPosition: number; position: number };
