import { ConflictError, DomainError, NotFoundError, type FieldProblem } from '../../../shared/domain/domain-error.js';

export class FieldNotFoundError extends NotFoundError {
  constructor() {
    super('Attribute', 'FIELDS.ATTRIBUTE_NOT_FOUND');
  }
}

export class ModelNotFoundError extends NotFoundError {
  constructor() {
    super('Model', 'FIELDS.MODEL_NOT_FOUND');
  }
}

export class FileNotFoundError extends NotFoundError {
  constructor() {
    super('File', 'FIELDS.FILE_NOT_FOUND');
  }
}

export class FieldNameTakenError extends ConflictError {
  constructor(name: string) {
    super(`A field named "${name}" already exists where a card could see both`, 'FIELDS.NAME_TAKEN');
  }
}

export class ModelNameTakenError extends ConflictError {
  constructor(name: string) {
    super(`A model named "${name}" already exists in this project`, 'FIELDS.MODEL_NAME_TAKEN');
  }
}

export class FieldHasValuesError extends ConflictError {
  constructor(name: string, change: string) {
    super(`Field "${name}" has values, so ${change} cannot be changed`, 'FIELDS.FIELD_HAS_VALUES');
  }
}

/** Bad input about fields: unknown property, unknown or unavailable field, bad definition. */
export class InvalidFieldInputError extends DomainError {
  readonly code = 'FIELDS.INVALID_INPUT';
  readonly kind = 'invalid' as const;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`, [{ field, message }]);
  }
}

export class UnknownFieldError extends DomainError {
  readonly code = 'FIELDS.UNKNOWN_ATTRIBUTE';
  readonly kind = 'invalid' as const;
  constructor(property: string, key: string) {
    super(`${property}: no field "${key}" in this card's project`, [{ field: property, message: `no field "${key}"` }]);
  }
}

export class FieldNotAvailableError extends DomainError {
  readonly code = 'FIELDS.ATTRIBUTE_NOT_AVAILABLE';
  readonly kind = 'invalid' as const;
  constructor(property: string, name: string) {
    const message = `field "${name}" belongs to a model this card is not associated with`;
    super(`${property}: ${message}`, [{ field: property, message }]);
  }
}

/** group_type fields belong to their group type (DESIGN.md §5). */
export class GroupTypeFieldError extends DomainError {
  readonly code = 'FIELDS.GROUP_TYPE_FIELD';
  readonly kind = 'invalid' as const;
  constructor(property: string, name: string, what = 'its value') {
    const message =
      `field "${name}" is a group_type field: ${what} cannot be changed through the attribute operations; ` +
      'use the grouping operations (group types, add-to-group, remove-from-group, relocate)';
    super(`${property}: ${message}`, [{ field: property, message }]);
  }
}

/**
 * Several values of one batch refused (DESIGN.md §2): every problem of each,
 * in the order the values were given, under the code of the first.
 */
export class InvalidValuesError extends DomainError {
  readonly code: string;
  readonly kind = 'invalid' as const;
  constructor(refused: Array<{ code: string; errors?: FieldProblem[] }>) {
    const problems = refused.flatMap((e) => e.errors ?? []);
    super(`${problems.length} values refused: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, problems);
    this.code = refused[0].code;
  }
}
