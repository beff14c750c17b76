export type {
  DateValue,
  FieldDef,
  FieldOptions,
  FieldType,
  FileInput,
  LikeVote,
  ListItem,
  ListItemByType,
  MemberRef,
  MultiValuedFieldType,
  NormalizedValue,
  NormalizedValueByType,
  PeriodValue,
} from './field-value.types.js';
export { FIELD_TYPES } from './field-value.types.js';
export type { FieldTypeInfo, OptionKind } from './field-type.catalogue.js';
export { emptyValue, fieldTypeCatalogue, isFieldType, isMultiValued, takesOptions, validateFieldOptions } from './field-type.catalogue.js';
export { parseListItem, parsePopValue, parseValue } from './field-value.parser.js';
export { FIELD_TYPE_HANDLERS, fieldTypeHandler, type FieldTypeHandler, type ValueStorage } from './field-type.handlers.js';
export { invalidValue } from './field-value.errors.js';
export { MAX_LIST_ITEMS } from './list-value.parser.js';
export { parseBool } from './bool.parser.js';
export { parseContent, parseText, MAX_CONTENT_LENGTH, MAX_TEXT_LENGTH } from './text.parser.js';
export { parseDate } from './date.parser.js';
export { MAX_FILE_NAME_LENGTH, MAX_FILE_URL_LENGTH, isValidFileName, parseFileId, parseFileInput, parseFiles } from './files.parser.js';
export { parseGroupType } from './group-type.parser.js';
export { parseLikes } from './likes.parser.js';
export { memberKey, parseMemberRef, parseMembers } from './members.parser.js';
export { parseNumber } from './number.parser.js';
export { parseCardRef, parseRelationships } from './relationships.parser.js';
export { isTimeOfDay, parseTime } from './time.parser.js';
