import { ConflictError, NotFoundError, type DomainError } from '../domain/domain-error.js';

// Driver errors, read in one place: the unit of work's retries, the HTTP
// error mapping and every repository that turns a violation into a domain error.

/** The SQLSTATE of a driver error ('' for anything else). */
export function sqlState(error: unknown): string {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : '';
}

/** A unique (23505) or foreign-key (23503) violation, with the constraint it hit. */
export interface ConstraintViolation {
  kind: 'unique' | 'foreign_key';
  constraint: string | undefined;
}

export function constraintViolation(error: unknown): ConstraintViolation | null {
  const state = sqlState(error);
  if (state !== '23505' && state !== '23503') return null;
  const e = error as { constraint?: unknown; driverError?: { constraint?: unknown } };
  const constraint = e?.driverError?.constraint ?? e?.constraint;
  return { kind: state === '23505' ? 'unique' : 'foreign_key', constraint: typeof constraint === 'string' ? constraint : undefined };
}

export interface ViolationMapping {
  /** The error to throw for a unique violation (a name or title taken, usually a 409). */
  unique?: (violation: ConstraintViolation) => Error;
  /** The error to throw for a foreign-key violation (a row referenced went, or never was). */
  foreignKey?: (violation: ConstraintViolation) => Error;
}

/**
 * The one place where unique and foreign-key violations become domain errors:
 * runs `work` and turns a violation into the error `mapping` gives for its
 * kind; other errors, and kinds without a mapping, pass through unchanged.
 */
export async function mapViolations<T>(work: () => Promise<T>, mapping: ViolationMapping): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const violation = constraintViolation(error);
    const toError = violation && (violation.kind === 'unique' ? mapping.unique : mapping.foreignKey);
    throw toError ? toError(violation) : error;
  }
}

/**
 * What a violation that no use case mapped means to the client, once the
 * transaction has been re-run against the current state and still hits it: a
 * unique violation is a conflict with what is there now (409), a foreign-key
 * violation names something that is gone (404). DESIGN.md §2: never a 500.
 */
export function violationAsDomainError(violation: ConstraintViolation): DomainError {
  return violation.kind === 'unique'
    ? new ConflictError('The request conflicts with the current state of the resource', 'STATE.CONFLICT')
    : new NotFoundError('A resource the request refers to');
}
