import { ConflictError, DomainError, NotFoundError } from '../../../shared/domain/domain-error.js';

export class CardNotFoundError extends NotFoundError {
  constructor() {
    super('Card', 'CARD.NOT_FOUND');
  }
}

export class CardCycleError extends ConflictError {
  constructor() {
    super('A card cannot be moved under itself or one of its descendants', 'CARD.CYCLE_DETECTED');
  }
}

/** A card would be deeper than MAX_CARD_DEPTH: creations and moves below it are refused. */
export class CardTooDeepError extends ConflictError {
  constructor(max: number) {
    super(`Cards may be at most ${max} levels below the top-level card (MAX_CARD_DEPTH)`, 'CARD.TOO_DEEP');
  }
}

export class TopLevelCardError extends ConflictError {
  constructor(action: string) {
    super(`The top-level card of a project cannot be ${action}`, 'CARD.TOP_LEVEL');
  }
}

export class InvalidCardInputError extends DomainError {
  readonly code = 'CARD.INVALID_INPUT';
  readonly kind = 'invalid' as const;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`, [{ field, message }]);
  }
}

/** The part of the tree a change needs kept changing while it waited for locks; retrying helps. */
export class TreeBusyError extends ConflictError {
  constructor() {
    super('The card tree is changing too fast here; try again', 'CARD.TREE_BUSY');
  }
}
