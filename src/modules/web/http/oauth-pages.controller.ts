import { Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../../shared/http/actor.decorator.js';
import { OAuthApi, type AuthorizationOutcome, type AuthorizeParams, type OAuthEndpointAnswer, type OAuthEndpointRequest } from '../../identity/index.js';
import { consentPage, errorPage } from '../views/pages.js';
import { sendEndpointAnswer } from './oauth-endpoint-bodies.middleware.js';
import { WebErrorFilter } from './web-error.filter.js';
import { WebContextService, type WebContext } from './web-context.js';

/** The parameters of an authorization request that the consent form carries back. */
const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'];

function authorizeParams(source: unknown): AuthorizeParams {
  const params: AuthorizeParams = {};
  for (const name of AUTHORIZE_PARAMS) {
    const value = (source as Record<string, unknown> | undefined)?.[name];
    if (value !== undefined) params[name] = value;
  }
  return params;
}

/** `form-action` must let the consent form's answer redirect to the application. */
function redirectTarget(params: AuthorizeParams): string[] {
  try {
    const url = new URL(String(params.redirect_uri));
    return [url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol];
  } catch {
    return [];
  }
}

/**
 * The OAuth 2.0 endpoints on AUTH_URL (DESIGN.md §3): the authorization page
 * (login if needed, then consent), the token and the revocation endpoints.
 */
@ApiExcludeController()
@Public()
@UseFilters(WebErrorFilter)
@Controller('oauth')
export class OAuthPagesController {
  constructor(
    private readonly web: WebContextService,
    private readonly oauth: OAuthApi,
  ) {}

  @Get('authorize')
  async authorize(@Req() req: Request, @Res() res: Response) {
    const params = authorizeParams(req.query);
    const outcome = await this.oauth.checkAuthorization(params);
    const ctx = await this.web.context(req, res);
    if (outcome.kind !== 'consent') return this.answer(res, ctx, outcome, 302);
    if (!ctx.account) return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    const echoed = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
    this.web.send(res, 200, consentPage(ctx, outcome.client, outcome.scopes, echoed), redirectTarget(params));
  }

  /** Approve or deny, from the consent form; 303 so the application's redirect URI is fetched with GET. */
  @Post('authorize')
  async decide(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.formContext(req, res);
    const params = authorizeParams(req.body);
    if (!ctx.account) {
      const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
      return res.redirect(303, `/login?next=${encodeURIComponent(`/oauth/authorize?${query}`)}`);
    }
    const approved = (req.body as Record<string, unknown>).decision === 'approve';
    const outcome = approved ? await this.oauth.approve(params, ctx.account.id) : await this.oauth.deny(params);
    this.answer(res, ctx, outcome, 303);
  }

  @Post('token')
  async token(@Req() req: Request, @Res() res: Response) {
    sendEndpointAnswer(res, inQuery(req) ? PARAMETERS_IN_QUERY : await this.oauth.token(endpointRequest(req)));
  }

  @Post('revoke')
  async revoke(@Req() req: Request, @Res() res: Response) {
    sendEndpointAnswer(res, inQuery(req) ? PARAMETERS_IN_QUERY : await this.oauth.revoke(endpointRequest(req)));
  }

  private answer(res: Response, ctx: WebContext, outcome: AuthorizationOutcome, redirectStatus: number): void {
    if (outcome.kind === 'redirect') return res.redirect(redirectStatus, outcome.location);
    const message = outcome.kind === 'fatal' ? outcome.message : 'Unexpected authorization state.';
    this.web.send(res, 400, errorPage(ctx, 'Authorization request refused', message));
  }
}

/**
 * Token and revocation requests carry their parameters in the form body
 * (RFC 6749 §3.2, RFC 7009 §2.1); one that puts any in the query string
 * (where secrets end up in logs) is refused before anything is read, with a
 * word saying where they go. (Before, it was read as if it had sent no body,
 * and answered for the first parameter the body lacked.)
 */
function inQuery(req: Request): boolean {
  return Object.keys(req.query ?? {}).length > 0;
}

const PARAMETERS_IN_QUERY: OAuthEndpointAnswer = {
  status: 400,
  headers: { 'Cache-Control': 'no-store' },
  body: { error: 'invalid_request', error_description: 'Send the parameters in the form-encoded body, not in the query string (RFC 6749 section 3.2)' },
};

function endpointRequest(req: Request): OAuthEndpointRequest {
  return { method: req.method, headers: req.headers, body: (req.body ?? {}) as Record<string, unknown> };
}
