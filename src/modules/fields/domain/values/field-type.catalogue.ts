import type { FieldOptions, FieldType, MultiValuedFieldType } from './field-value.types.js';
import { FIELD_TYPES } from './field-value.types.js';
import { isPlainObject } from './json.guards.js';
import { InvalidInputError } from '../../../../shared/domain/domain-error.js';

export type OptionKind = 'boolean';

export interface FieldTypeInfo {
  type: FieldType;
  label: string;
  options: Record<string, OptionKind>;
}

const CATALOGUE: readonly FieldTypeInfo[] = [
  { type: 'text', label: 'Text', options: {} },
  { type: 'content', label: 'Content (markdown)', options: {} },
  { type: 'number', label: 'Number', options: {} },
  { type: 'bool', label: 'Yes/No', options: {} },
  { type: 'date', label: 'Date', options: { time: 'boolean', period: 'boolean' } },
  { type: 'time', label: 'Time', options: {} },
  { type: 'members', label: 'Members', options: {} },
  { type: 'likes', label: 'Likes', options: {} },
  { type: 'relationships', label: 'Relationships', options: {} },
  { type: 'files', label: 'Files', options: {} },
  { type: 'group_type', label: 'Labels / Multiple choice', options: {} },
];

const MULTI_VALUED: ReadonlySet<FieldType> = new Set<MultiValuedFieldType>(['members', 'relationships', 'files']);

/** Body of GET /attribute-types; copies so a caller cannot alter the catalogue. */
export function fieldTypeCatalogue(): FieldTypeInfo[] {
  return CATALOGUE.map((info) => ({ ...info, options: { ...info.options } }));
}

export function isFieldType(value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value);
}

export function isMultiValued(type: FieldType): type is MultiValuedFieldType {
  return MULTI_VALUED.has(type);
}

/** What a card shows for a field without a value: lists stay lists so clients can iterate. */
export function emptyValue(type: FieldType): [] | null {
  return isMultiValued(type) ? [] : null;
}

/**
 * Checks the options sent when a field is created or changed and returns them
 * with only the keys that were set (null/undefined mean "not set").
 * `field` names the request property in the 400 (`options` by default).
 */
export function validateFieldOptions(type: FieldType, options: unknown, field = 'options'): FieldOptions {
  if (options === undefined || options === null) return {};
  if (!isPlainObject(options)) {
    throw new InvalidInputError(`${field}: expected an object`, [{ field, message: 'expected an object' }]);
  }
  const allowed = CATALOGUE.find((info) => info.type === type)?.options ?? {};
  const result: FieldOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(allowed, key)) {
      const known = Object.keys(allowed);
      const message = known.length
        ? `unknown option ${key} for type ${type} (known: ${known.join(', ')})`
        : `type ${type} takes no options (got ${key})`;
      throw new InvalidInputError(`${field}: ${message}`, [{ field: `${field}.${key}`, message }]);
    }
    if (value === undefined || value === null) continue;
    if (typeof value !== 'boolean') {
      const message = 'expected a boolean';
      throw new InvalidInputError(`${field}.${key}: ${message}`, [{ field: `${field}.${key}`, message }]);
    }
    if (key === 'time' || key === 'period') result[key] = value;
  }
  return result;
}
