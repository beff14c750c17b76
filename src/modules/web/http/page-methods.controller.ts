import { All, Controller, Req, RequestMethod, Res, UseFilters } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../../shared/http/actor.decorator.js';
import { errorPage } from '../views/pages.js';
import { AccountPagesController } from './account-pages.controller.js';
import { DeveloperPagesController } from './developer-pages.controller.js';
import { OAUTH_ENDPOINT_PATHS } from './oauth-endpoint-bodies.middleware.js';
import { OAuthPagesController } from './oauth-pages.controller.js';
import { WebContextService } from './web-context.js';
import { WebErrorFilter } from './web-error.filter.js';

/** `/` + the controller's path + the handler's path. */
const joined = (...parts: string[]) => `/${parts.flatMap((p) => p.split('/')).filter(Boolean).join('/')}`;

/** Each page route's path (`/account/api-keys/:id/revoke`) and the methods its handlers take, read from the controllers' decorators. */
function pageRoutes(controllers: Function[]): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>();
  for (const controller of controllers) {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = Object.getOwnPropertyDescriptor(controller.prototype, name)?.value as object | undefined;
      const method = typeof handler === 'function' ? (Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined) : undefined;
      if (name === 'constructor' || method === undefined) continue;
      for (const path of [Reflect.getMetadata(PATH_METADATA, handler!) as string | string[]].flat()) {
        const route = joined(base, path);
        routes.set(route, (routes.get(route) ?? new Set()).add(RequestMethod[method]));
      }
    }
  }
  return routes;
}

const ROUTES = pageRoutes([AccountPagesController, DeveloperPagesController, OAuthPagesController]);
/** The page routes; the token and revocation endpoints answer other methods themselves (RFC 6749 JSON). */
const PAGE_ROUTES = [...ROUTES.keys()].filter((route) => !OAUTH_ENDPOINT_PATHS.includes(route));

/** The nearest page above a form's target that a browser can open (`/account` for `/account/api-keys/:id/revoke`). */
function pageAbove(route: string): string {
  const parent = joined(...route.split('/').slice(0, -1));
  return ROUTES.get(parent)?.has('GET') || parent === '/' ? parent : pageAbove(parent);
}

/** `Allow`'s value: the route's methods, HEAD with GET (Express answers it). */
function allowed(route: string): string {
  const methods = [...(ROUTES.get(route) ?? [])];
  return (methods.includes('GET') ? [...methods, 'HEAD'] : methods).sort().join(', ');
}

/**
 * A page's path with a method none of its handlers takes. Registered after
 * the page controllers (WebModule lists it last), so it gets only what they
 * left: before, Nest's 404 answered, in the API's problem+json.
 * - GET or HEAD of a form's target (`/account/api-keys` after creating a key,
 *   then Enter in the address bar, or a restored tab): 303 to the page the
 *   form is on, which lists what the form made.
 * - Any other method: 405 with `Allow`, as the HTML error page with a link
 *   to that page (or to the path's own page, for `PUT /login`).
 */
@ApiExcludeController()
@Public()
@UseFilters(WebErrorFilter)
@Controller()
export class PageMethodsController {
  constructor(private readonly web: WebContextService) {}

  @All(PAGE_ROUTES)
  async otherMethod(@Req() req: Request, @Res() res: Response) {
    const route = joined(String(req.route?.path ?? req.path));
    const page = ROUTES.get(route)?.has('GET') ? route : pageAbove(route);
    if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(303, page);
    res.setHeader('Allow', allowed(route));
    const message = `This address takes ${allowed(route)}, not ${req.method}.`;
    // The user's own navigation: a logged-in user is not shown as logged out.
    this.web.send(res, 405, errorPage(await this.web.context(req, res), 'Method Not Allowed', message, page));
  }
}
