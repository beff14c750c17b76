import { isFieldAvailable, sameName, type FieldDefinition } from '../domain/field-definition.js';
import { FieldNotAvailableError, UnknownFieldError } from '../domain/fields.errors.js';

export type Lookup = { field: FieldDefinition } | { unavailable: FieldDefinition } | null;

/**
 * Finds the field a request names for a card: a field id, then the exact
 * name, then the name in any case. The id comes first because it never
 * changes: a client that stores ids must not be sent to a field someone
 * later named "9" (a field named so is still found by name when no field of
 * the project has that id). `fields` are all the fields of the card's
 * project; a match among another model's fields is reported as unavailable.
 */
export function lookupField(fields: FieldDefinition[], modelId: number | null, key: string): Lookup {
  if (/^[1-9]\d{0,15}$/.test(key)) {
    const byId = fields.find((f) => f.id === Number(key));
    if (byId) return isFieldAvailable(byId, modelId) ? { field: byId } : { unavailable: byId };
  }
  const available = fields.filter((f) => isFieldAvailable(f, modelId));
  const exact = available.find((f) => f.name === key);
  if (exact) return { field: exact };
  const loose = available.find((f) => sameName(f.name, key));
  if (loose) return { field: loose };
  const hidden = fields.find((f) => sameName(f.name, key));
  return hidden ? { unavailable: hidden } : null;
}

/** For keys in a request body: unknown or unavailable → 400 naming the property. */
export function requireBodyField(fields: FieldDefinition[], modelId: number | null, key: string, property: string): FieldDefinition {
  const found = lookupField(fields, modelId, key);
  if (!found) throw new UnknownFieldError(property, key);
  if ('unavailable' in found) throw new FieldNotAvailableError(property, found.unavailable.name);
  return found.field;
}
