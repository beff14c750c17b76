import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { closeAfterAnswer } from './body-limits.js';
import { sendProblem, titleFor } from './problem.js';

/** The media types of the API's request bodies (DESIGN.md §2): JSON, form fields, multipart form fields and uploads. */
export const API_BODY_TYPES = ['application/json', 'application/*+json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/** Writes the answer to a body that is not read (the connection is closed after it). */
export type BodyRefusal = (req: Request, res: Response) => void;

/**
 * A request that carries a body the API does not read (text/plain, XML,
 * octet-stream, or no Content-Type at all) is a 415 naming the types it reads,
 * before any route runs. The parsers would leave such a body unread, and the
 * route then ran as if nothing had been sent: `POST /cards/{id}/model` removed
 * the card's model, a relocation moved the card last, a query string stood in
 * for the body. A request without a body (no Content-Length or 0, and not
 * chunked) passes whatever its Content-Type says; a chunked body of an unread
 * type is refused at its first byte, and passes when it ends empty. `answer`
 * writes the refusal: a 415 problem+json for the API.
 */
export function refuseUnreadBodies(accepted: string[] = API_BODY_TYPES, answer: BodyRefusal = unsupportedMediaProblem(accepted)): RequestHandler {
  const refuse = (req: Request, res: Response): void => {
    // The body is not read: the connection closes after the answer, as for a 413.
    closeAfterAnswer(res);
    answer(req, res);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const chunked = req.headers['transfer-encoding'] !== undefined;
    if (!chunked && !(Number(req.headers['content-length']) > 0)) return next();
    if (req.headers['content-type'] && req.is(accepted)) return next();
    if (!chunked) return refuse(req, res);
    const onData = (chunk: Buffer): void => {
      if (chunk.length === 0) return;
      done();
      refuse(req, res);
    };
    const onEnd = (): void => {
      done();
      next();
    };
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
    };
    req.on('data', onData);
    req.on('end', onEnd);
  };
}

function unsupportedMediaProblem(accepted: string[]): BodyRefusal {
  const named = accepted.filter((type) => !type.includes('*'));
  const detail = `This API reads request bodies of type ${named.join(', ')} (and application/*+json as JSON)`;
  return (req, res) => {
    const sent = req.headers['content-type'] ? `A body of type ${req.headers['content-type'].split(';')[0].trim()}` : 'A body without a Content-Type';
    sendProblem(res, {
      status: 415,
      type: 'INPUT.UNSUPPORTED_MEDIA',
      title: titleFor(415),
      detail: `${sent} is not read. ${detail}.`,
      // RFC 9110 §15.5.16: Accept in a 415 says which media types would have been read.
      headers: { Accept: named.join(', ') },
    });
  };
}
