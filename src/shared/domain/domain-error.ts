/** How an error maps onto HTTP; the global filter owns the mapping. */
export type DomainErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'too_large'
  | 'unsupported_media'
  | 'rate_limited'
  | 'unavailable';

export interface FieldProblem {
  field?: string;
  message: string;
  [extra: string]: unknown;
}

/**
 * Base of every error that domain and application code throws on purpose.
 * The message is shown to clients, so it must never carry internals.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly kind: DomainErrorKind;

  constructor(
    message: string,
    readonly errors?: FieldProblem[],
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Input that fails validation: bad type, bad value, unknown property. */
export class InvalidInputError extends DomainError {
  readonly code = 'INPUT.INVALID';
  readonly kind = 'invalid' as const;
}

/** A resource that does not exist or that the caller may not see. */
export class NotFoundError extends DomainError {
  readonly code: string;
  readonly kind = 'not_found' as const;
  constructor(what: string, code = 'RESOURCE.NOT_FOUND') {
    super(`${what} not found`);
    this.code = code;
  }
}

export class ForbiddenError extends DomainError {
  readonly code = 'ACCESS.FORBIDDEN';
  readonly kind = 'forbidden' as const;
}

export class UnauthorizedError extends DomainError {
  readonly code = 'AUTH.UNAUTHORIZED';
  readonly kind = 'unauthorized' as const;
  /** The `WWW-Authenticate` challenge: Basic for API keys, Bearer for OAuth tokens (RFC 6750). */
  constructor(
    message: string,
    readonly challenge = 'Basic realm="cardwork"',
  ) {
    super(message);
  }
}

export class ConflictError extends DomainError {
  readonly code: string;
  readonly kind = 'conflict' as const;
  constructor(message: string, code = 'STATE.CONFLICT', errors?: FieldProblem[]) {
    super(message, errors);
    this.code = code;
  }
}

export class PayloadTooLargeError extends DomainError {
  readonly code = 'INPUT.TOO_LARGE';
  readonly kind = 'too_large' as const;
}

export class UnsupportedMediaError extends DomainError {
  readonly code = 'INPUT.UNSUPPORTED_MEDIA';
  readonly kind = 'unsupported_media' as const;
}

export class RateLimitedError extends DomainError {
  readonly code = 'RATE.LIMITED';
  readonly kind = 'rate_limited' as const;
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many requests; retry in ${retryAfterSeconds} s`);
  }
}

/**
 * One user has as much in progress at once as one user may (their share of
 * something every request draws on); a 429 like a rate limit, since waiting
 * for their own requests to end is the cure.
 */
export class ConcurrencyLimitedError extends DomainError {
  readonly code: string;
  readonly kind = 'rate_limited' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code: string,
  ) {
    super(message);
    this.code = code;
  }
}

/** The server cannot take the request now (no memory left for it); the client may retry after `retryAfterSeconds`. */
export class ServiceBusyError extends DomainError {
  readonly code = 'SERVICE.BUSY';
  readonly kind = 'unavailable' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
