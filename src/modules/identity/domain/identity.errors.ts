import { ConflictError, DomainError, NotFoundError } from '../../../shared/domain/domain-error.js';

/** Names the field taken in `errors` too, so the sign-up page can mark it. */
export class UserTakenError extends ConflictError {
  constructor(what: 'username' | 'email') {
    super(`A user with this ${what} already exists`, 'IDENTITY.USER_TAKEN', [{ field: what, message: 'already taken' }]);
  }
}

export class UserNotFoundError extends NotFoundError {
  constructor() {
    super('User', 'IDENTITY.USER_NOT_FOUND');
  }
}

export class ApiKeyNotFoundError extends NotFoundError {
  constructor() {
    super('API key', 'IDENTITY.API_KEY_NOT_FOUND');
  }
}

/**
 * A user holds as many live API keys as they may (API_KEYS_PER_USER_MAX):
 * the rate limit counts per key, so more keys would mean more requests.
 * A conflict with the current state, as AWS IAM answers for access keys:
 * revoking one makes room.
 */
export class ApiKeyLimitError extends ConflictError {
  constructor(max: number) {
    super(`This user already holds ${max} API keys, as many as one user may; revoke one to create another`, 'IDENTITY.API_KEY_LIMIT');
  }
}

export class InvalidUserError extends DomainError {
  readonly code = 'IDENTITY.INVALID_USER';
  readonly kind = 'invalid' as const;
}

export class OAuthClientNotFoundError extends NotFoundError {
  constructor() {
    super('Application', 'IDENTITY.OAUTH_CLIENT_NOT_FOUND');
  }
}

export class InvalidOAuthClientError extends DomainError {
  readonly code = 'IDENTITY.INVALID_OAUTH_CLIENT';
  readonly kind = 'invalid' as const;
}

export class CrossSiteWriteError extends DomainError {
  readonly code = 'AUTH.CROSS_SITE_WRITE';
  readonly kind = 'forbidden' as const;
  constructor() {
    super('A browser sent this request from another site; the API takes no writes from other sites');
  }
}

/** An Idempotency-Key used before, within its 24 hours, with another request (method, path, query or body). */
export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'INPUT.IDEMPOTENCY_KEY_REUSED';
  readonly kind = 'unprocessable' as const;
  constructor() {
    super('This Idempotency-Key was used with another request (method, path, query or body); a new request needs a new key', [
      { field: 'Idempotency-Key', message: 'used before with another request' },
    ]);
  }
}

/** The first request with this Idempotency-Key is still running: a retry waits for it rather than running twice. */
export class RequestInProgressError extends ConflictError {
  readonly retryAfterSeconds: number;
  /**
   * `running`: how long the first request has held the key, when known;
   * `takeover`: how long a claim may run before a retry takes it over (its
   * server taken to have stopped, the request run again). Retry-After is a
   * second at first, then longer (a claim a crash left waits out its
   * takeover, and a long import its end), at most 30 s.
   */
  constructor(held?: { runningSeconds: number; takeoverSeconds: number }) {
    const running = held ? Math.floor(held.runningSeconds) : 0;
    const left = held ? Math.max(1, Math.ceil(held.takeoverSeconds - held.runningSeconds)) : 1;
    super(
      held
        ? `The first request with this Idempotency-Key has been running for ${running} s; retry after Retry-After seconds to get its answer. ` +
            `If its server stopped, the key is taken over in ${left} s and the retry then runs it again`
        : 'A request with this Idempotency-Key is still running; retry after Retry-After seconds to get its answer',
      'REQUEST.IN_PROGRESS',
    );
    this.retryAfterSeconds = running < 10 ? 1 : Math.min(30, left);
  }
}

/** The first request with this Idempotency-Key succeeded, and its answer was not kept to be replayed. */
export class AnswerNotKeptError extends ConflictError {
  constructor(status: number) {
    super(
      `The first request with this Idempotency-Key succeeded (${status}), but its answer was not kept (over 1 MiB, past the answers kept for you in the last day, or one that holds a secret); it is not run again: read the resource it made or changed instead (a new API key's secret is shown once: revoke that key, listed by GET /me/api-keys, and create another under a new Idempotency-Key)`,
      'REQUEST.ANSWER_NOT_KEPT',
    );
  }
}
