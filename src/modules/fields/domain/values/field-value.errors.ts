import { InvalidInputError } from '../../../../shared/domain/domain-error.js';

/**
 * The 400 every parser throws: the message names the field so a client sending
 * a batch of values can tell which one was refused, and `errors` carries the
 * same for the problem+json body.
 */
export function invalidValue(field: string, expected: string): InvalidInputError {
  return new InvalidInputError(`${field}: ${expected}`, [{ field, message: expected }]);
}
