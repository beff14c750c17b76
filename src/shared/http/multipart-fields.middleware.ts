import type { NextFunction, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { InvalidInputError } from '../domain/domain-error.js';
import { capBody } from './body-limits.js';
import { checkUtf8Fields } from './invalid-utf8.js';

/**
 * DESIGN.md §2: request parameters may come as form fields, and a multipart
 * form is one (`curl -F title=x`). For every route that takes no file, its
 * text fields become the body, capped like the JSON and urlencoded bodies
 * (`limit`, 413 past it); a file part is a 400 naming it, and so is a text
 * field that is not UTF-8 (`checkUtf8Fields`). The routes that
 * take an upload (`uploadRoutes`, matched against the path) read their
 * multipart bodies themselves, after authentication (MultipartUpload), and
 * are left alone.
 */
export function multipartFields(options: { limit: number; uploadRoutes: RegExp[] }): RequestHandler {
  const parse = checkUtf8Fields(
    multer({
      limits: { fieldSize: options.limit, fields: 1000, parts: 1000 },
      defParamCharset: 'utf8',
    }).none(),
    options.limit,
  );
  const reads = readsFormFields(options.uploadRoutes);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!reads(req)) return next();
    if (!capBody(req, res, options.limit)) return;
    parse(req, res, (error, notUtf8) => {
      if (res.headersSent) return; // answered 413 while the body came in
      next(error ? formError(error) : notUtf8);
    });
  };
}

/** Whether `multipartFields` reads the request's body: a multipart form on a route that takes no file. */
export function readsFormFields(uploadRoutes: RegExp[]): (req: Request) => boolean {
  return (req) => Boolean(req.is('multipart/form-data')) && !uploadRoutes.some((route) => route.test(req.path));
}

function formError(error: unknown): InvalidInputError {
  if (error instanceof multer.MulterError) {
    const field = error.field ?? '(body)';
    if (error.code === 'LIMIT_UNEXPECTED_FILE') {
      return new InvalidInputError(`${field}: this request takes no file; send its parameters as text fields`, [
        { field, message: 'this request takes no file; send its parameters as text fields' },
      ]);
    }
    return new InvalidInputError(`Malformed multipart body: ${error.message}`, [{ field, message: error.message }]);
  }
  // busboy's parse errors ("Unexpected end of form", "Malformed part header")
  return new InvalidInputError('Malformed multipart body', [{ field: '(body)', message: 'malformed multipart body' }]);
}
