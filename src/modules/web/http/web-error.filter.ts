import { type ArgumentsHost, Catch, type ExceptionFilter, Injectable, Logger, NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { PayloadTooLargeError } from '../../../shared/domain/domain-error.js';
import { tooLargeDetail, type TooLargeAnswer } from '../../../shared/http/body-limits.js';
import { ProblemDetailsFilter } from '../../../shared/http/problem-details.filter.js';
import { sendProblem } from '../../../shared/http/problem.js';
import type { SlowBodyAnswer } from '../../../shared/http/slow-bodies.js';
import { safeNext } from '../views/next-target.js';
import { errorPage, logInPage, signUpPage, type PageContext } from '../views/pages.js';
import { CsrfError, field, sendPage, WebContextService } from './web-context.js';
import { ALL_WEB_PATHS, formPage, WEB_PAGE_PATHS } from './web-paths.js';

const problems = new ProblemDetailsFilter();
const BLANK: PageContext = { account: null, csrf: '' };
const EXPIRED = 'This form has expired or did not come from this site. Reload the page and try again.';

/**
 * An error as the HTML error page, with the status an API call would get,
 * the navigation of `ctx` (who is logged in) and, for a form's post, a link
 * back to the page the form is on.
 */
function sendErrorPage(error: unknown, req: Request, res: Response, ctx: PageContext = BLANK, https?: boolean): void {
  const back = req.method === 'POST' ? formPage(req.path) : undefined;
  if (error instanceof CsrfError) return sendPage(res, 403, errorPage(ctx, 'Form expired', EXPIRED, back), [], https);
  const p = problems.toProblem(error, req);
  // A busy or rate-limited page says when to come back, as the API does; a
  // Basic challenge would open the browser's own sign-in dialog instead of ours.
  if (p.headers?.['Retry-After']) res.setHeader('Retry-After', p.headers['Retry-After']);
  sendPage(res, p.status, errorPage(ctx, p.title, p.detail, back), [], https);
}

/** Errors of the web pages become HTML pages with the same status an API call would get. */
@Injectable()
@Catch()
export class WebErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(WebErrorFilter.name);

  constructor(private readonly web: WebContextService) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    this.answer(error, req, res).catch((failure: unknown) => {
      this.logger.error(failure);
      if (!res.headersSent) sendErrorPage(error, req, res);
    });
  }

  /** The page as the user's own (their navigation), or logged out when the session cannot be read (the database is down). */
  private async answer(error: unknown, req: Request, res: Response): Promise<void> {
    const ctx = await this.web.context(req, res).catch(() => BLANK);
    if (res.headersSent) return;
    if (error instanceof CsrfError && !error.crossSite && (await this.expiredLogInForm(req, res, ctx))) return;
    sendErrorPage(error, req, res, ctx, this.web.secure(req));
  }

  /**
   * A login or sign-up form refused as expired (its pre-session cookie gone,
   * a browser restarted): the same form again, filled in as sent but for the
   * password, with a fresh token and the reason, so sending it again works.
   * A browser that is logged in by now (a double click whose first answer
   * logged it in) goes where the form was going. False for any other form.
   * Not for a post from another origin (the caller checks): another site's
   * page must not fill in a form of ours in front of the user.
   */
  private async expiredLogInForm(req: Request, res: Response, ctx: PageContext): Promise<boolean> {
    const form = formPage(req.path);
    if (req.method !== 'POST' || (form !== '/login' && form !== '/signup')) return false;
    const next = safeNext(field(req, 'next'));
    if (ctx.account) {
      res.redirect(303, next);
      return true;
    }
    const page =
      form === '/login'
        ? logInPage(ctx, { login: field(req, 'login').trim(), next, error: EXPIRED })
        : signUpPage(ctx, { username: field(req, 'username').trim(), email: field(req, 'email').trim(), next, error: EXPIRED });
    this.web.send(res, 403, page);
    return true;
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
