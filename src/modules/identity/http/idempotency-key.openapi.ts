import type { ParameterObject, ResponseObject } from '@nestjs/swagger';
import { IS_PUBLIC } from '../../../shared/http/actor.decorator.js';
import { API_PREFIX } from '../../../shared/http/api-prefix.js';
import { RETRY_AFTER, type ErrorReason, type ErrorRule } from '../../../shared/http/error-responses.js';
import { KEY_LIFETIME_HOURS, STALE_CLAIM_MINUTES } from '../infrastructure/idempotency-keys.store.js';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency-key.guard.js';

const KEY_PARAMETER: ParameterObject = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'Makes a retry of this request safe: a unique value per request, such as a UUID (1 to 255 visible ASCII characters), ' +
    `kept per user for ${KEY_LIFETIME_HOURS} hours from its first use. A retry with the same key and the same request ` +
    '(method, path, query and body) gets the first success again, with `Idempotent-Replayed: true`, and runs nothing; ' +
    'a first answer that was not a success is not kept, and the retry runs. Not taken with a multipart/form-data body',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
};

/** An operation whose body is only multipart (an upload): it is streamed to the handler, so the key is refused. */
const REFUSED_PARAMETER: ParameterObject = {
  ...KEY_PARAMETER,
  description: 'Not taken by this operation, whose body is multipart/form-data (streamed to the handler, it cannot be compared with a retry\'s first): a 400',
};

const INVALID_KEY: ErrorReason = {
  status: 400,
  why: `INPUT.INVALID: the \`${IDEMPOTENCY_KEY_HEADER}\` header is not 1 to 255 visible ASCII characters, or comes with a multipart/form-data body, which it is not taken with; \`errors\` names the header`,
};

const IN_PROGRESS: ErrorReason = {
  status: 409,
  why: `REQUEST.IN_PROGRESS: the first request with this \`${IDEMPOTENCY_KEY_HEADER}\` is still running; retry after \`Retry-After\` seconds to get its answer (a claim running for over ${STALE_CLAIM_MINUTES} minutes, of a server that stopped, is taken over and run again)`,
  headers: RETRY_AFTER,
};

const NOT_KEPT: ErrorReason = {
  status: 409,
  why: `REQUEST.ANSWER_NOT_KEPT: the first request with this \`${IDEMPOTENCY_KEY_HEADER}\` succeeded, but its answer was not kept to be replayed (over 1 MiB, past the 32 MiB of answers kept per user for a day, or holding a secret shown once, as a new API key); it is not run again`,
};

const REUSED: ErrorReason = {
  status: 422,
  why: `INPUT.IDEMPOTENCY_KEY_REUSED: this \`${IDEMPOTENCY_KEY_HEADER}\` was used in the last ${KEY_LIFETIME_HOURS} hours with another request (method, path, query or body); nothing was run`,
};

const REPLAYED = {
  'Idempotent-Replayed': { description: `\`true\` on a replay of the first answer to this \`${IDEMPOTENCY_KEY_HEADER}\``, schema: { type: 'string', enum: ['true'] } },
};

/**
 * The `Idempotency-Key` of every authenticated POST under the API
 * (IdempotencyKeyGuard): the optional header, the replay's header on its
 * successes, and the answers the key can cause.
 */
export const idempotencyKeyResponses: ErrorRule = (op) => {
  if (op.method !== 'POST' || !op.path.startsWith(`/${API_PREFIX}/`) || op.declared<boolean>(IS_PUBLIC)) return [];
  const body = op.operation.requestBody;
  const types = body && 'content' in body ? Object.keys(body.content) : [];
  const uploadOnly = types.length > 0 && types.every((type) => type.startsWith('multipart/'));
  op.operation.parameters = [...(op.operation.parameters ?? []), uploadOnly ? REFUSED_PARAMETER : KEY_PARAMETER];
  if (uploadOnly) return [INVALID_KEY];
  for (const [status, answer] of Object.entries(op.operation.responses)) {
    if (/^2\d\d$/.test(status) && answer && !('$ref' in answer)) (answer as ResponseObject).headers = { ...answer.headers, ...REPLAYED };
  }
  return [INVALID_KEY, IN_PROGRESS, NOT_KEPT, REUSED];
};
