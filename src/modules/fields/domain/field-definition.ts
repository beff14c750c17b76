import { CONTROL_CHARACTER_MESSAGE, hasControlCharacter, isReservedName, longerThan, RESERVED_NAME_MESSAGE } from '../../../shared/domain/safe-text.js';
import type { FieldOptions, FieldType } from './values/index.js';
import { InvalidFieldInputError } from './fields.errors.js';

export const MAX_NAME_LENGTH = 1024;

/** A field (attribute) definition: project-wide when `modelId` is null, else a model's own field. */
export interface FieldDefinition {
  id: number;
  projectId: number;
  modelId: number | null;
  name: string;
  type: FieldType;
  options: FieldOptions;
  groupTypeId: number | null;
}

export interface ModelDefinition {
  id: number;
  projectId: number;
  name: string;
}

/** The attribute JSON of DESIGN.md §4. */
export interface AttributeView {
  id: number;
  name: string;
  type: FieldType;
  project_id: number;
  model_id: number | null;
  options: FieldOptions;
  group_type_id: number | null;
}

export function toAttributeView(f: FieldDefinition): AttributeView {
  return {
    id: f.id,
    name: f.name,
    type: f.type,
    project_id: f.projectId,
    model_id: f.modelId,
    options: f.options,
    group_type_id: f.groupTypeId,
  };
}

export interface ModelView {
  id: number;
  project_id: number;
  name: string;
}

export function toModelView(m: ModelDefinition): ModelView {
  return { id: m.id, project_id: m.projectId, name: m.name };
}

/** Names of fields and models: 1–1024 characters after trimming, printable. */
export function validName(value: unknown, property = 'name'): string {
  if (typeof value !== 'string' || !value.trim()) throw new InvalidFieldInputError(property, 'must be a non-empty string');
  const name = value.trim();
  if (longerThan(name, MAX_NAME_LENGTH)) throw new InvalidFieldInputError(property, `must be at most ${MAX_NAME_LENGTH} characters`);
  if (hasControlCharacter(name)) throw new InvalidFieldInputError(property, CONTROL_CHARACTER_MESSAGE);
  if (isReservedName(name)) throw new InvalidFieldInputError(property, RESERVED_NAME_MESSAGE);
  return name;
}

/**
 * A field's name: `validName`, and not digits only. Requests name a field by
 * id or by name, id first (field-lookup.ts), so a field named "3" could not
 * be set by name wherever field 3 exists, and a client sending the card
 * JSON's keys back would write field 3 instead.
 */
export function validFieldName(value: unknown, property = 'name'): string {
  const name = validName(value, property);
  if (/^\d+$/.test(name)) {
    throw new InvalidFieldInputError(
      property,
      'must not be only digits: a field is named by its id or its name, the id first, so such a name could mean another field (add a word, e.g. "Year 2024")',
    );
  }
  return name;
}

/** A card sees the project's fields, plus its model's own fields when it has a model. */
export function isFieldAvailable(field: FieldDefinition, cardModelId: number | null): boolean {
  return field.modelId === null || field.modelId === cardModelId;
}

/** Case-insensitive, as the unique indexes compare names. */
export function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
