import type { OpenAPIObject } from '@nestjs/swagger';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { announcesBody, closeAfterAnswer } from './body-limits.js';
import { problemResponse, sendProblem, titleFor } from './problem.js';

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
    if (!announcesBody(req)) return next();
    const chunked = req.headers['transfer-encoding'] !== undefined;
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

/** The accepted types a 415 names (a range such as application/*+json is told in words). */
const namedTypes = (accepted: string[]): string[] => accepted.filter((type) => !type.includes('*'));

function unsupportedMediaProblem(accepted: string[]): BodyRefusal {
  const named = namedTypes(accepted);
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

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const UNREAD_BODY = 'INPUT.UNSUPPORTED_MEDIA: a request body of a media type the API does not read (text/plain, XML, octet-stream, none given); nothing is changed';

/**
 * Lists refuseUnreadBodies' 415 in the OpenAPI document, on every operation.
 * The middleware covers every route under the API's prefix, whatever the
 * method and whether the operation takes a body (a read takes its
 * parameters from one too), and the document holds only those routes (not
 * the web pages nor /oauth/*). A 415 an operation already documents (a
 * spreadsheet of an unknown format) keeps its words, followed by these.
 */
export function documentUnreadBodies(document: OpenAPIObject, accepted: string[] = API_BODY_TYPES): void {
  const example = namedTypes(accepted).join(', ');
  const headers = { Accept: { description: 'the media types the API reads', schema: { type: 'string' as const, example } } };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const own = operation.responses['415'];
      const description = own && 'description' in own ? `${own.description}. Also: ${UNREAD_BODY}` : UNREAD_BODY;
      operation.responses['415'] = problemResponse(document, description, headers);
    }
  }
}
