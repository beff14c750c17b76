import { parseBool } from './bool.parser.js';
import { parseDate } from './date.parser.js';
import { invalidValue } from './field-value.errors.js';
import type { FieldDef, FieldType, ListItem, MemberRef, NormalizedValueByType } from './field-value.types.js';
import { parseFileId, parseFileInput, parseFiles } from './files.parser.js';
import { parseGroupType } from './group-type.parser.js';
import { parseLikes } from './likes.parser.js';
import { parseMemberRef, parseMembers } from './members.parser.js';
import { parseNumber } from './number.parser.js';
import { parseCardRef, parseRelationships } from './relationships.parser.js';
import { parseContent, parseText } from './text.parser.js';
import { parseTime } from './time.parser.js';

export type OptionKind = 'boolean';

/**
 * Where a type's values are kept; the application layer has one reader and
 * one writer per kind (`scalar`: one jsonb per card and field; `members`,
 * `relationships`: ordered lists of ids; `likes`: one vote per user; `files`:
 * file rows; `groups`: grouping's memberships, never written by fields).
 */
export type ValueStorage = 'scalar' | 'members' | 'relationships' | 'likes' | 'files' | 'groups';

/** Everything about one field type, in one place: the catalogue entry, parsing, the empty value, the storage. */
export interface FieldTypeHandler<T extends FieldType = FieldType> {
  label: string;
  options: Record<string, OptionKind>;
  storage: ValueStorage;
  /** The value of a "set" operation; `null` clears the field. */
  parse(field: FieldDef, input: unknown): NormalizedValueByType[T] | null;
  /** Multi-valued types: the one value `append` adds, and what `pop` removes. */
  list?: {
    item(field: string, input: unknown): ListItem;
    pop(field: string, input: unknown): MemberRef | number;
  };
  /** What a card shows for the field when it has no value. */
  empty(): unknown;
}

const none = () => null;
const emptyList = () => [];

export const FIELD_TYPE_HANDLERS: { readonly [T in FieldType]: FieldTypeHandler<T> } = {
  text: { label: 'Text', options: {}, storage: 'scalar', parse: (f, v) => parseText(f.name, v), empty: none },
  content: { label: 'Content (markdown)', options: {}, storage: 'scalar', parse: (f, v) => parseContent(f.name, v), empty: none },
  number: { label: 'Number', options: {}, storage: 'scalar', parse: (f, v) => parseNumber(f.name, v), empty: none },
  bool: { label: 'Yes/No', options: {}, storage: 'scalar', parse: (f, v) => parseBool(f.name, v), empty: none },
  date: {
    label: 'Date',
    options: { time: 'boolean', period: 'boolean' },
    storage: 'scalar',
    parse: (f, v) => parseDate(f.name, v, f.options),
    empty: none,
  },
  time: { label: 'Time', options: {}, storage: 'scalar', parse: (f, v) => parseTime(f.name, v), empty: none },
  members: {
    label: 'Members',
    options: {},
    storage: 'members',
    parse: (f, v) => parseMembers(f.name, v),
    list: { item: parseMemberRef, pop: parseMemberRef },
    empty: emptyList,
  },
  likes: {
    label: 'Likes',
    options: {},
    storage: 'likes',
    parse: (f, v) => parseLikes(f.name, v),
    // Shown as the score and each user's vote, so clients read every card the same way.
    empty: () => ({ score: 0, votes: {} }),
  },
  relationships: {
    label: 'Relationships',
    options: {},
    storage: 'relationships',
    parse: (f, v) => parseRelationships(f.name, v),
    list: { item: parseCardRef, pop: parseCardRef },
    empty: emptyList,
  },
  files: {
    label: 'Files',
    options: {},
    storage: 'files',
    parse: (f, v) => parseFiles(f.name, v),
    list: { item: parseFileInput, pop: parseFileId },
    empty: emptyList,
  },
  group_type: {
    label: 'Labels / Multiple choice',
    options: {},
    storage: 'groups',
    parse: (f, v) => parseGroupType(f.name, v),
    empty: emptyList,
  },
};

export function fieldTypeHandler<T extends FieldType>(type: T): FieldTypeHandler<T> {
  return FIELD_TYPE_HANDLERS[type];
}

/** `append` and `pop` on a type that is not a list. */
export function notMultiValued(field: FieldDef): never {
  if (field.type === 'group_type') parseGroupType(field.name, undefined);
  throw invalidValue(field.name, `append and pop apply only to members, relationships and files fields, not ${field.type}`);
}
