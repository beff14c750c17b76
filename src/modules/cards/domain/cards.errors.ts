import { DomainError, NotFoundError } from '../../../shared/domain/domain-error.js';

export class ComposedCardNotFoundError extends NotFoundError {
  constructor() {
    super('Card', 'CARD.NOT_FOUND');
  }
}

/** A bad query parameter of a card listing (same code as card-hierarchy's card input errors). */
export class InvalidListingInputError extends DomainError {
  readonly code = 'CARD.INVALID_INPUT';
  readonly kind = 'invalid' as const;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`, [{ field, message }]);
  }
}
