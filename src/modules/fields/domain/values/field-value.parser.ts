import type { FieldDef, ListItem, MemberRef, NormalizedValue } from './field-value.types.js';
import { parseBool } from './bool.parser.js';
import { parseDate } from './date.parser.js';
import { parseFileId, parseFileInput, parseFiles } from './files.parser.js';
import { parseGroupType } from './group-type.parser.js';
import { parseLikes } from './likes.parser.js';
import { parseMemberRef, parseMembers } from './members.parser.js';
import { parseNumber } from './number.parser.js';
import { parseCardRef, parseRelationships } from './relationships.parser.js';
import { parseContent, parseText } from './text.parser.js';
import { parseTime } from './time.parser.js';
import { invalidValue } from './field-value.errors.js';

/** Normalises the value of a "set" operation; `null` clears every type but group_type. */
export function parseValue(field: FieldDef, input: unknown): NormalizedValue {
  const name = field.name;
  switch (field.type) {
    case 'text':
      return parseText(name, input);
    case 'content':
      return parseContent(name, input);
    case 'number':
      return parseNumber(name, input);
    case 'bool':
      return parseBool(name, input);
    case 'date':
      return parseDate(name, input, field.options);
    case 'time':
      return parseTime(name, input);
    case 'members':
      return parseMembers(name, input);
    case 'likes':
      return parseLikes(name, input);
    case 'relationships':
      return parseRelationships(name, input);
    case 'files':
      return parseFiles(name, input);
    case 'group_type':
      return parseGroupType(name, input);
  }
}

function notMultiValued(field: FieldDef): never {
  if (field.type === 'group_type') parseGroupType(field.name, undefined);
  throw invalidValue(field.name, `append and pop apply only to members, relationships and files fields, not ${field.type}`);
}

/** The single value `append` adds; arrays are refused since append adds exactly one. */
export function parseListItem(field: FieldDef, input: unknown): ListItem {
  const name = field.name;
  switch (field.type) {
    case 'members':
      return parseMemberRef(name, input);
    case 'relationships':
      return parseCardRef(name, input);
    case 'files':
      return parseFileInput(name, input);
    default:
      return notMultiValued(field);
  }
}

/** The value `pop` removes: a member, a card id, or a stored file's id. */
export function parsePopValue(field: FieldDef, input: unknown): MemberRef | number {
  const name = field.name;
  switch (field.type) {
    case 'members':
      return parseMemberRef(name, input);
    case 'relationships':
      return parseCardRef(name, input);
    case 'files':
      return parseFileId(name, input);
    default:
      return notMultiValued(field);
  }
}
