import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { DomainError } from '../domain/domain-error.js';
import { clientAddress, type MemoryHold, type MemoryOwner, type UploadMemoryBudget } from '../upload-memory.js';
import { closeAfterAnswer, PARSED_BODY_TYPES } from './body-limits.js';

/**
 * A share of the upload memory budget given back when the response ends,
 * answered, failed or cut by the client (or earlier, by its holder);
 * counted against `owner` too, within their share.
 */
export function holdUntilClosed(memory: UploadMemoryBudget, res: Response, owner?: MemoryOwner): MemoryHold {
  const hold = memory.hold(owner);
  if (res.closed) hold.release();
  else res.once('close', () => hold.release());
  return hold;
}

/**
 * Takes a body of unknown length (chunked) from the budget chunk by chunk as
 * it arrives; the first chunk that cannot fit is `refuse`d at once, before
 * the parser sees it. Listening before the parser does puts this first. A
 * chunk that arrives once the request is answered (a 413, a refusal) or its
 * hold given back is not refused again.
 */
export function takeAsItArrives(
  req: Request,
  res: Response,
  hold: MemoryHold,
  refuse: (refusal: DomainError) => void,
): { stop(): void; refusal?: DomainError } {
  const counting: { stop(): void; refusal?: DomainError } = { stop: () => req.off('data', take) };
  function take(chunk: Buffer): void {
    if (counting.refusal || res.headersSent || hold.take(chunk.length)) return;
    counting.refusal = hold.refusal();
    counting.stop();
    refuse(counting.refusal);
  }
  req.on('data', take);
  return counting;
}

/**
 * Runs the JSON and form body parsers (`parse`; or another that `reads` the
 * request's body, the multipart form fields of a route that takes no file)
 * with the body's bytes held
 * against the process's upload memory budget (UPLOAD_MEMORY_MAX_BYTES)
 * while it is read and parsed. Each body is at most 1 MiB, but nothing
 * bounded how many were being read at once: they are read before any
 * credential is checked, so a thousand clients each sending a slow
 * megabyte, signed in or not, made the process hold a gigabyte and more.
 * A body that cannot fit is a 503 with Retry-After (SERVICE.BUSY) and
 * reaches no route: a declared Content-Length before any byte is read, a
 * chunked body as soon as a chunk does not fit. The hold ends with the
 * parse (or the response, if the client leaves first): from there the
 * request is authenticated and rate-limited like any other, and the
 * downloads and uploads it makes take their own bytes. The credential is
 * not known yet, so the client's address takes the place of the user: its
 * bodies together take at most a user's share (a 429 past it).
 */
export function holdParsedBodies(
  memory: UploadMemoryBudget,
  parse: RequestHandler,
  reads: (req: Request) => boolean = (req) => Boolean(req.is(PARSED_BODY_TYPES)),
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent || !reads(req)) return void parse(req, res, next);
    const hold = holdUntilClosed(memory, res, clientAddress(req.ip));
    const refuse = (refusal: DomainError): void => {
      // The parser would otherwise read the rest before the answer goes.
      closeAfterAnswer(res);
      next(refusal);
    };
    const declared = Number(req.headers['content-length']);
    // Node never reads past a declared length: it is taken whole.
    if (Number.isFinite(declared) && !hold.take(declared)) return refuse(hold.refusal());
    const counting = Number.isFinite(declared) ? undefined : takeAsItArrives(req, res, hold, refuse);
    parse(req, res, (error?: unknown) => {
      counting?.stop();
      hold.release();
      // Refused while the body came in: that was the answer, whatever the parser made of the rest.
      if (!counting?.refusal) next(error);
    });
  };
}
