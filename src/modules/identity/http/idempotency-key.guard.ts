import { CanActivate, ExecutionContext, Injectable, Logger, SetMetadata } from '@nestjs/common';
import type { Request, Response } from 'express';
import { clientWatch } from '../../../shared/client-watch.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { InvalidInputError } from '../../../shared/domain/domain-error.js';
import { AnswerSent } from '../../../shared/http/answer-sent.js';
import { API_PREFIX } from '../../../shared/http/api-prefix.js';
import { AnswerNotKeptError, IdempotencyKeyReusedError, RequestInProgressError } from '../domain/identity.errors.js';
import {
  IdempotencyKeysStore,
  MAX_KEPT_ANSWER_BYTES,
  requestFingerprint,
  type KeptAnswer,
  type KeyClaim,
} from '../infrastructure/idempotency-keys.store.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** 1 to 255 visible ASCII characters. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
const UNDER_API = `/${API_PREFIX}/`;
/** A claim that finds the key's row gone (its request failed meanwhile) claims again, this many times in all. */
const CLAIM_ATTEMPTS = 3;

/**
 * `Idempotency-Key` on the API's POSTs (the IETF httpapi draft, as Stripe
 * takes it; README, docs/RELIABILITY.md): the first request with a key
 * claims it for its user before its handler runs, and keeps its 2xx answer,
 * which a retry with the same key and the same request gets again
 * (`Idempotent-Replayed: true`) without running anything. Any other answer
 * lets the key go, so the retry runs. Another request under a used key is a
 * 422; one while the first still runs, a 409 with `Retry-After`.
 *
 * A global guard after the authentication guard (a 401 comes first, and the
 * key is the actor's), not an interceptor: with any interceptor, Nest runs
 * every request of every route through its RxJS pipeline (about 9 % of a
 * cheap write's CPU, docs/PERFORMANCE.md, ninth pass), and a request without
 * the header costs this guard three property reads. The answer is captured
 * from `res.write`/`res.end`, whichever way the route answers (a returned
 * value, JSON text, the exception filter), and its last bytes wait until it
 * is stored: a client that has the answer can always get its replay.
 */
@Injectable()
export class IdempotencyKeyGuard implements CanActivate {
  private readonly logger = new Logger('IdempotencyKey');

  constructor(private readonly store: IdempotencyKeysStore) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const key = req.headers['idempotency-key'];
    // In any case, as Express routes it (`/API/1.0/…` reaches the same handlers).
    if (key === undefined || req.method !== 'POST' || !req.originalUrl.toLowerCase().startsWith(UNDER_API)) return true;
    const actor = (req as Request & { user?: Actor }).user;
    // A public route has no user to keep keys for (none takes a POST today).
    if (!actor) return true;
    const holdsSecret = Reflect.getMetadata(HOLDS_SECRET, context.getHandler()) === true;
    return this.take(req, context.switchToHttp().getResponse<Response>(), actor.userId, Array.isArray(key) ? key.join(', ') : key, holdsSecret);
  }

  private async take(req: Request, res: Response, userId: number, key: string, holdsSecret: boolean): Promise<boolean> {
    if (!VALID_KEY.test(key)) throw invalidKey('must be 1 to 255 visible ASCII characters (no spaces)');
    // Its body is streamed to the handler, so it cannot be fingerprinted before the handler runs.
    if (String(req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/')) {
      throw invalidKey('is not taken on multipart/form-data uploads: send the request without it');
    }
    const fingerprint = requestFingerprint(req.method, req.originalUrl, req.body);
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const claim = await this.store.claim(userId, key, fingerprint);
      if (claim) {
        // Runs to its end even if the client leaves: its answer is what the retry gets.
        clientWatch()?.hold();
        this.keepAnswer(res, claim, holdsSecret);
        return true;
      }
      const state = await this.store.state(userId, key);
      if (!state) continue;
      if (state.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
      if (state.state === 'running') throw new RequestInProgressError(state);
      if (!state.answer.body) throw new AnswerNotKeptError(state.answer.status);
      replay(res, state.answer);
      throw new AnswerSent();
    }
    throw new RequestInProgressError();
  }

  /**
   * Collects what the route writes and, at `res.end`, stores a 2xx answer (or
   * lets the key go on any other) before the end goes out. Each bytes chunk
   * is copied: a caller may reuse its buffer once `write` returns.
   */
  private keepAnswer(res: Response, claim: KeyClaim, holdsSecret: boolean): void {
    const write = res.write;
    const end = res.end;
    const chunks: Buffer[] = [];
    let size = 0;
    let ending = false;
    const keep = (chunk: unknown, encoding: unknown): void => {
      if (holdsSecret || chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
      size += bytes.length;
      if (size <= MAX_KEPT_ANSWER_BYTES) chunks.push(bytes);
      else chunks.length = 0;
    };
    const settle = async (): Promise<void> => {
      const status = res.statusCode;
      try {
        if (status < 200 || status >= 300) return await this.store.release(claim);
        const body = holdsSecret || size > MAX_KEPT_ANSWER_BYTES ? null : Buffer.concat(chunks, size);
        await this.store.complete(claim, { status, contentType: headerOf(res, 'content-type'), location: headerOf(res, 'location'), body });
      } catch (error) {
        // The answer still goes out; the key stays claimed until it is stale (STALE_CLAIM_MINUTES).
        this.logger.warn(`could not ${status < 300 ? 'keep the answer of' : 'release'} an Idempotency-Key: ${String(error)}`);
      }
    };
    res.write = function (this: Response, ...args: unknown[]) {
      keep(args[0], args[1]);
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as Response['write'];
    res.end = function (this: Response, ...args: unknown[]) {
      if (ending) return (end as (...a: unknown[]) => Response).apply(this, args);
      ending = true;
      keep(args[0], args[1]);
      void settle().finally(() => (end as (...a: unknown[]) => Response).apply(res, args));
      return this;
    } as Response['end'];
  }
}

const HOLDS_SECRET = 'cardwork:answer-holds-secret';

/**
 * A route whose 2xx answer holds a secret shown once (a new API key): under
 * an Idempotency-Key it is kept as done without its body (only hashes of
 * keys are stored), and a retry is a 409 REQUEST.ANSWER_NOT_KEPT.
 */
export const AnswerHoldsSecret = (): MethodDecorator => SetMetadata(HOLDS_SECRET, true);

function invalidKey(what: string): InvalidInputError {
  return new InvalidInputError(`The ${IDEMPOTENCY_KEY_HEADER} header ${what}`, [{ field: IDEMPOTENCY_KEY_HEADER, message: what }]);
}

function headerOf(res: Response, name: string): string | null {
  const value = res.getHeader(name);
  return value === undefined ? null : String(value);
}

/** The kept answer, as it went out the first time, marked as a replay. */
function replay(res: Response, answer: KeptAnswer): void {
  res.status(answer.status);
  if (answer.contentType) res.setHeader('Content-Type', answer.contentType);
  if (answer.location) res.setHeader('Location', answer.location);
  res.setHeader('Idempotent-Replayed', 'true');
  res.end(answer.body);
}
