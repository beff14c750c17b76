import { type ArgumentsHost, Catch, type ExceptionFilter, NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { PayloadTooLargeError } from '../../../shared/domain/domain-error.js';
import { tooLargeDetail, type TooLargeAnswer } from '../../../shared/http/body-limits.js';
import { ProblemDetailsFilter } from '../../../shared/http/problem-details.filter.js';
import { sendProblem } from '../../../shared/http/problem.js';
import type { SlowBodyAnswer } from '../../../shared/http/slow-bodies.js';
import { errorPage } from '../views/pages.js';
import { CsrfError, sendPage } from './web-context.js';
import { ALL_WEB_PATHS, WEB_PAGE_PATHS } from './web-paths.js';

const problems = new ProblemDetailsFilter();

/** An error as the HTML error page, with the status an API call would get. */
function sendErrorPage(error: unknown, req: Request, res: Response): void {
  const blank = { account: null, csrf: '' };
  if (error instanceof CsrfError) {
    const message = 'This form has expired or did not come from this site. Go back, reload the page and try again.';
    return sendPage(res, 403, errorPage(blank, 'Form expired', message));
  }
  const p = problems.toProblem(error, req);
  // A busy or rate-limited page says when to come back, as the API does; a
  // Basic challenge would open the browser's own sign-in dialog instead of ours.
  if (p.headers?.['Retry-After']) res.setHeader('Retry-After', p.headers['Retry-After']);
  sendPage(res, p.status, errorPage(blank, p.title, p.detail));
}

/** Errors of the web pages become HTML pages with the same status an API call would get. */
@Catch()
export class WebErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    sendErrorPage(error, host.switchToHttp().getRequest<Request>(), res);
  }
}

/**
 * The same for a page's request refused before any route runs (the app-wide
 * middleware: text with NUL or not UTF-8 in the query or the form, a
 * malformed form): an Express error handler placed before the one that
 * answers problem+json, which gets every other path's errors.
 */
export function answerWebPageErrors() {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (!error || !WEB_PAGE_PATHS.test(req.path)) return next(error);
    if (res.headersSent) return;
    sendErrorPage(error, req, res);
  };
}

/**
 * A path outside the API's prefix that no web route has (`/favicon.ico`, a
 * mistyped page): 404, as the HTML error page with a link to the site, or in
 * the API's problem+json for a client that asks for JSON. Nest's own 404
 * covers only the prefix and the web routes' paths; these got Express's
 * bare `Cannot GET` page.
 */
export function answerUnknownPaths(apiPrefix: string) {
  const api = `/${apiPrefix}`.toLowerCase();
  return (req: Request, res: Response, next: NextFunction): void => {
    const path = req.path.toLowerCase();
    if (path === api || path.startsWith(`${api}/`) || ALL_WEB_PATHS.test(req.path)) return next();
    const wanted = req.accepts(['html', 'json', 'application/problem+json']);
    if (wanted === 'json' || wanted === 'application/problem+json') {
      return sendProblem(res, problems.toProblem(new NotFoundException(`Cannot ${req.method} ${req.path}`), req));
    }
    sendPage(res, 404, errorPage({ account: null, csrf: '' }, 'Not Found', `There is no page at ${req.path}.`, '/'));
  };
}

/**
 * limitParsedBodies' 413 for a page: a form (or JSON) body over the limit,
 * refused before any route runs (at once for a declared Content-Length, or
 * once the bytes read pass it), is the HTML error page too.
 */
export function webPageTooLarge(req: Request): TooLargeAnswer | undefined {
  return WEB_PAGE_PATHS.test(req.path) ? sendTooLargePage : undefined;
}

const sendTooLargePage: TooLargeAnswer = (res, limit) => {
  if (res.headersSent) return;
  sendErrorPage(new PayloadTooLargeError(tooLargeDetail(limit)), res.req, res);
};

/** refuseSlowBodies' 408 for a page: the HTML error page too. */
export function webPageTooSlow(req: Request): SlowBodyAnswer | undefined {
  if (!WEB_PAGE_PATHS.test(req.path)) return undefined;
  return (res, detail) => {
    if (!res.headersSent) sendErrorPage(Object.assign(new Error(detail), { status: 408, expose: true }), res.req, res);
  };
}
