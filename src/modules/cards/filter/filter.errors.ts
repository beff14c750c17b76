import { DomainError } from '../../../shared/domain/domain-error.js';

/**
 * A filter that cannot be read or used: a syntax error, an unknown field or a
 * value the field cannot compare with. The body carries `position` (0-based
 * offset into the filter text, in UTF-16 code units) and `expected`.
 */
export class FilterError extends DomainError {
  readonly code = 'FILTER.INVALID';
  readonly kind = 'invalid' as const;

  constructor(
    readonly position: number,
    readonly expected: string,
    readonly problem = `expected ${expected}`,
    readonly parameter = 'filter',
  ) {
    const message = `${problem} at position ${position}`;
    super(`${parameter}: ${message}`, [{ field: parameter, message, position, expected }], { position, expected });
  }

  /** The same error reported under another parameter name (`filters`). */
  as(parameter: string): FilterError {
    return new FilterError(this.position, this.expected, this.problem, parameter);
  }
}
