import { Controller, Get, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppConfig } from '../../../config/app-config.js';
import { DomainError, RateLimitedError } from '../../../shared/domain/domain-error.js';
import { Public } from '../../../shared/http/actor.decorator.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { AccountsApi, IdentityAdminApi, OAuthApi, type Account } from '../../identity/index.js';
import { FormSubmissionsService } from '../application/form-submissions.service.js';
import { accountPage, logInPage, signUpClosedPage, signUpPage, WEB_CSS, type AccountView } from '../views/pages.js';
import { WebErrorFilter } from './web-error.filter.js';
import { safeNext } from '../views/next-target.js';
import { errorField, field, WebContextService, type AccountContext } from './web-context.js';

/**
 * What `/account?done=…` says after a form's redirect: fixed texts only, so
 * a link cannot make the page say anything else.
 */
const NOTICES = new Map([
  ['app-revoked', "Access revoked: the application's tokens no longer work."],
  [
    'key-resent',
    'This form was already sent: the API key was created and is in the list below. Its secret was shown only once, in the answer to the first send; if you did not copy it, revoke that key and create another.',
  ],
  [
    'password',
    'Your password is changed. Every other browser logged in to your account is logged out; this one stays. Your API keys and authorized applications keep working.',
  ],
]);

/** The login page's text for a refusal over the login limit, with its Retry-After. */
function tooManyAttempts(res: Response, error: RateLimitedError): string {
  res.setHeader('Retry-After', String(error.retryAfterSeconds));
  return `Too many login attempts. Try again in ${error.retryAfterSeconds} seconds.`;
}

/** Sign-up, login, logout and the account page (API keys, authorized applications, password), on AUTH_URL. */
@ApiExcludeController()
@Public()
@UseFilters(WebErrorFilter)
@Controller()
export class AccountPagesController {
  constructor(
    private readonly web: WebContextService,
    private readonly config: AppConfig,
    private readonly accounts: AccountsApi,
    private readonly admin: IdentityAdminApi,
    private readonly oauth: OAuthApi,
    private readonly forms: FormSubmissionsService,
  ) {}

  @Get()
  home(@Res() res: Response) {
    res.redirect(303, '/account');
  }

  @Get('web.css')
  css(@Res() res: Response) {
    res.type('text/css').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(WEB_CSS);
  }

  @Get('signup')
  async signUpForm(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.context(req, res);
    if (!this.config.allowSignup) return this.web.send(res, 403, signUpClosedPage(ctx, safeNext(req.query.next)));
    if (ctx.account) return res.redirect(303, safeNext(req.query.next));
    this.web.send(res, 200, signUpPage(ctx, { next: safeNext(req.query.next) }));
  }

  @Post('signup')
  async signUp(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.formContext(req, res);
    if (!this.config.allowSignup) return this.web.send(res, 403, signUpClosedPage(ctx, safeNext(field(req, 'next'))));
    const input = { username: field(req, 'username').trim(), email: field(req, 'email').trim(), password: field(req, 'password') };
    try {
      const first = await this.forms.once(ctx.submission, 'signup', () => this.accounts.signUp(input), input.username);
      const account = first.repeated ? await this.sameSignUp(req, input, first.note) : first.value;
      await this.web.logIn(req, res, account.id);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // A repeated sign-up logs in (sameSignUp), which the login limits may refuse: 429 as the login page answers.
      if (error instanceof RateLimitedError) {
        return this.web.send(res, 429, signUpPage(ctx, { ...input, error: tooManyAttempts(res, error), next: field(req, 'next') }));
      }
      const status = error.kind === 'conflict' ? 409 : 400;
      return this.web.send(res, status, signUpPage(ctx, { ...input, error: error.message, errorField: errorField(error), next: field(req, 'next') }));
    }
    res.redirect(303, safeNext(field(req, 'next')));
  }

  /**
   * A sign-up form sent again (a double click: the browser dropped the first
   * answer, and the session cookie with it). If that first send created the
   * account it names, with this password, this one logs in as it would have;
   * anything else is a sign-up of its own (409 for the name now taken).
   */
  private async sameSignUp(req: Request, input: { username: string; email: string; password: string }, created: string | null): Promise<Account> {
    const account = created === input.username ? await this.accounts.logIn(input.username, input.password, req.ip ?? 'unknown') : null;
    return account ?? this.accounts.signUp(input);
  }

  @Get('login')
  async logInForm(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.context(req, res);
    if (ctx.account) return res.redirect(303, safeNext(req.query.next));
    this.web.send(res, 200, logInPage(ctx, { next: safeNext(req.query.next) }));
  }

  @Post('login')
  async logIn(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.formContext(req, res);
    const login = field(req, 'login').trim();
    let account;
    try {
      account = await this.accounts.logIn(login, field(req, 'password'), req.ip ?? 'unknown');
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error;
      return this.web.send(res, 429, logInPage(ctx, { login, next: field(req, 'next'), error: tooManyAttempts(res, error) }));
    }
    if (!account) {
      return this.web.send(res, 401, logInPage(ctx, { login, next: field(req, 'next'), error: 'Wrong user name, email or password.' }));
    }
    await this.web.logIn(req, res, account.id);
    res.redirect(303, safeNext(field(req, 'next')));
  }

  @Post('logout')
  async logOut(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.formContext(req, res);
    await this.web.logOut(req, res, ctx);
    res.redirect(303, '/login');
  }

  @Get('account')
  async account(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountPage(req, res, '/account');
    if (!ctx) return;
    await this.showAccount(res, ctx, 200, { notice: NOTICES.get(String(req.query.done)) });
  }

  /** The account page with the user's keys and authorized applications. */
  private async showAccount(res: Response, ctx: AccountContext, status: number, extra: Omit<AccountView, 'keys' | 'apps'> = {}) {
    const [keys, apps] = await Promise.all([this.admin.listApiKeys(ctx.account.id), this.oauth.authorizedApps(ctx.account.id)]);
    this.web.send(res, status, accountPage(ctx, { keys, apps, ...extra }));
  }

  /**
   * The new key is in this answer only (the page is not cached; a redirect
   * would lose it). The same form sent again (a reload of this answer, a
   * double click) creates nothing: 303 to the list, which says so. Over the
   * key limit, the account page with the limit's error (409); a name
   * refused, the page with the error beside the form, the name kept (400).
   */
  @Post('account/api-keys')
  async createKey(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountForm(req, res, '/account');
    if (!ctx) return;
    const name = field(req, 'name').trim();
    let first;
    try {
      first = await this.forms.once(ctx.submission, 'api-key', () => this.admin.createApiKey(ctx.account.id, name));
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'conflict') return this.showAccount(res, ctx, 409, { error: error.message });
      if (error instanceof DomainError && error.kind === 'invalid') return this.showAccount(res, ctx, 400, { keyError: error.message, keyName: name });
      throw error;
    }
    if (first.repeated) return res.redirect(303, '/account?done=key-resent');
    await this.showAccount(res, ctx, 201, { created: { name, key: first.value.apiKey } });
  }

  @Post('account/api-keys/:id/revoke')
  async revokeKey(@Req() req: Request, @Res() res: Response, @Param('id', ParseIdPipe) id: number) {
    const ctx = await this.web.accountForm(req, res, '/account');
    if (!ctx) return;
    await this.admin.revokeApiKey(ctx.account.id, id);
    res.redirect(303, '/account');
  }

  /** Ends every authorization this user gave the application (an id of none, or of an app already revoked: nothing to end). */
  @Post('account/apps/:id/revoke')
  async revokeApp(@Req() req: Request, @Res() res: Response, @Param('id', ParseIdPipe) id: number) {
    const ctx = await this.web.accountForm(req, res, '/account');
    if (!ctx) return;
    await this.oauth.revokeAuthorizedApp(ctx.account.id, id);
    res.redirect(303, '/account?done=app-revoked');
  }

  /**
   * A wrong current password is refused as the login page refuses one (401)
   * and counts toward the same limits (429 past them); a new password that
   * sign-up would refuse is 400. Either way nothing changes.
   */
  @Post('account/password')
  async changePassword(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountForm(req, res, '/account');
    if (!ctx) return;
    const passwords = { current: field(req, 'current_password'), next: field(req, 'new_password') };
    let changed: boolean;
    try {
      changed = await this.web.changePassword(req, res, ctx, passwords);
    } catch (error) {
      if (error instanceof RateLimitedError) return this.showAccount(res, ctx, 429, { passwordError: tooManyAttempts(res, error) });
      if (error instanceof DomainError && error.kind === 'invalid') {
        return this.showAccount(res, ctx, 400, { passwordError: error.message, passwordErrorField: errorField(error) });
      }
      throw error;
    }
    if (!changed) return this.showAccount(res, ctx, 401, { passwordError: 'Wrong current password.', passwordErrorField: 'current_password' });
    res.redirect(303, '/account?done=password');
  }
}
