import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { UploadMemoryBudget } from '../upload-memory.js';
import { closeAfterAnswer, PARSED_BODY_TYPES } from './body-limits.js';

/**
 * Runs the JSON and form body parsers (`parse`) with the body's bytes held
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
 * not known yet, so no user's share applies.
 */
export function holdParsedBodies(memory: UploadMemoryBudget, parse: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent || !req.is(PARSED_BODY_TYPES)) return void parse(req, res, next);
    const hold = memory.hold();
    if (res.closed) hold.release();
    else res.once('close', () => hold.release());
    let refused = false;
    const refuse = (): void => {
      refused = true;
      // The parser would otherwise read the rest before the answer goes.
      closeAfterAnswer(res);
      next(hold.refusal());
    };
    const declared = Number(req.headers['content-length']);
    let take: ((chunk: Buffer) => void) | undefined;
    if (Number.isFinite(declared)) {
      // Node never reads past a declared length: it is taken whole.
      if (!hold.take(declared)) return refuse();
    } else {
      // Listening in the same tick as the parser does: it sees every chunk this counts.
      take = (chunk: Buffer): void => {
        // Already answered (a 413 for the size), or the client left: nothing to refuse.
        if (refused || res.headersSent || hold.take(chunk.length)) return;
        req.off('data', take!);
        refuse();
      };
      req.on('data', take);
    }
    parse(req, res, (error?: unknown) => {
      if (take) req.off('data', take);
      hold.release();
      // Refused while the body came in: that was the answer, whatever the parser made of the rest.
      if (!refused) next(error);
    });
  };
}

/** Runs the parsers one after another, as `app.use` would: the first error ends the chain. */
export function parsersInTurn(...parsers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    const run = (i: number, error?: unknown): void => {
      if (error || i === parsers.length) return next(error);
      parsers[i](req, res, (e?: unknown) => run(i + 1, e));
    };
    run(0);
  };
}
