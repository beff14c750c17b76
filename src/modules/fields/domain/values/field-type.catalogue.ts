import type { FieldOptions, FieldType, MultiValuedFieldType } from './field-value.types.js';
import { FIELD_TYPE_HANDLERS, type OptionKind } from './field-type.handlers.js';
import { FIELD_TYPES } from './field-value.types.js';
import { isPlainObject } from './json.guards.js';
import { InvalidInputError } from '../../../../shared/domain/domain-error.js';

export type { OptionKind } from './field-type.handlers.js';

export interface FieldTypeInfo {
  type: FieldType;
  label: string;
  options: Record<string, OptionKind>;
}

/** Body of GET /attribute-types; copies so a caller cannot alter the catalogue. */
export function fieldTypeCatalogue(): FieldTypeInfo[] {
  return FIELD_TYPES.map((type) => {
    const { label, options } = FIELD_TYPE_HANDLERS[type];
    return { type, label, options: { ...options } };
  });
}

export function isFieldType(value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value);
}

export function isMultiValued(type: FieldType): type is MultiValuedFieldType {
  return FIELD_TYPE_HANDLERS[type].list !== undefined;
}

/** Whether the type has options that decide which values it accepts (date: time, period). */
export function takesOptions(type: FieldType): boolean {
  return Object.keys(FIELD_TYPE_HANDLERS[type].options).length > 0;
}

/** What a card shows for a field without a value: lists stay lists so clients can iterate. */
export function emptyValue(type: FieldType): unknown {
  return FIELD_TYPE_HANDLERS[type].empty();
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
  const allowed = FIELD_TYPE_HANDLERS[type].options;
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
