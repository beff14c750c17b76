import type { FieldDef, ListItem, MemberRef, NormalizedValue } from './field-value.types.js';
import { fieldTypeHandler, notMultiValued } from './field-type.handlers.js';

/** Normalises the value of a "set" operation; `null` clears every type but group_type. */
export function parseValue(field: FieldDef, input: unknown): NormalizedValue {
  return fieldTypeHandler(field.type).parse(field, input);
}

/** The single value `append` adds; arrays are refused since append adds exactly one. */
export function parseListItem(field: FieldDef, input: unknown): ListItem {
  const list = fieldTypeHandler(field.type).list;
  return list ? list.item(field.name, input) : notMultiValued(field);
}

/** The value `pop` removes: a member, a card id, or a stored file's id. */
export function parsePopValue(field: FieldDef, input: unknown): MemberRef | number {
  const list = fieldTypeHandler(field.type).list;
  return list ? list.pop(field.name, input) : notMultiValued(field);
}
