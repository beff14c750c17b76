import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ProblemDetailsFilter } from '../../../shared/http/problem-details.filter.js';
import { errorPage } from '../views/pages.js';
import { CsrfError, WebContextService } from './web-context.js';

/** Errors of the web pages become HTML pages with the same status an API call would get. */
@Catch()
export class WebErrorFilter implements ExceptionFilter {
  private readonly problems = new ProblemDetailsFilter();

  constructor(private readonly web: WebContextService) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    const blank = { account: null, csrf: '' };
    if (error instanceof CsrfError) {
      const message = 'This form has expired or did not come from this site. Go back, reload the page and try again.';
      return this.web.send(res, 403, errorPage(blank, 'Form expired', message));
    }
    const p = this.problems.toProblem(error, req);
    this.web.send(res, p.status, errorPage(blank, p.title, p.detail));
  }
}
