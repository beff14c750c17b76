import { ConflictError, DomainError, NotFoundError } from '../../../shared/domain/domain-error.js';

export class GroupTypeNotFoundError extends NotFoundError {
  constructor() {
    super('Group type', 'GROUPING.GROUP_TYPE_NOT_FOUND');
  }
}

export class GroupNotFoundError extends NotFoundError {
  constructor() {
    super('Group', 'GROUPING.GROUP_NOT_FOUND');
  }
}

/** Bad input, including ids in the body that name no usable group or type (400 naming the property). */
export class InvalidGroupingInputError extends DomainError {
  readonly code = 'GROUPING.INVALID_INPUT';
  readonly kind = 'invalid' as const;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`, [{ field, message }]);
  }
}

export class DuplicateGroupTitleError extends ConflictError {
  constructor(title: string) {
    super(`A group titled "${title}" already exists in this scope and type`, 'GROUPING.DUPLICATE_GROUP_TITLE');
  }
}

export class DuplicateGroupTypeNameError extends ConflictError {
  constructor(name: string) {
    super(`A group type named "${name}" already exists in this project`, 'GROUPING.DUPLICATE_GROUP_TYPE_NAME');
  }
}

/** add-to-group on a one_group_per_card type whose card already sits in another of its groups. */
export class OneGroupPerCardError extends ConflictError {
  constructor() {
    super(
      'This group type allows one group per card and the card is already in another of its groups; move it with relocate',
      'GROUPING.ONE_GROUP_PER_CARD',
    );
  }
}

/** Turning one_group_per_card on while some card is in several groups of the type. */
export class SeveralGroupsPerCardError extends ConflictError {
  constructor() {
    super(
      'Some cards are in several groups of this type; remove them from the extra groups first',
      'GROUPING.SEVERAL_GROUPS_PER_CARD',
    );
  }
}
