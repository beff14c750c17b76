import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { CookieOptions, Request, Response } from 'express';
import { AppConfig } from '../../../config/app-config.js';
import type { DomainError } from '../../../shared/domain/domain-error.js';
import { isCrossSiteWrite } from '../../../shared/http/cross-site.policy.js';
import type { Account } from '../../identity/index.js';
import type { FormSubmission } from '../application/form-submissions.service.js';
import { SESSION_LIFETIME_MS, SessionsService, tokenHash } from '../application/sessions.service.js';
import type { SafeHtml } from '../views/html.js';
import type { PageContext } from '../views/pages.js';

export interface WebContext extends PageContext {
  /** The session token from the cookie (null when logged out). */
  sessionToken: string | null;
  /** A posted form's one-time submission id (`formContext`; none on a GET or for a token without one). */
  submission?: FormSubmission;
}

export type AccountContext = WebContext & { account: Account };

/** The id of a pre-session secret (9 random bytes), which names its cookie and starts its forms' token. */
const PRE_SESSION_ID_LENGTH = 12;
const PRE_SESSION_ID = /^[\w-]{12}$/;
/**
 * The one-time submission id at the end of each page's `_csrf` (12 random
 * bytes): every rendering of a page gets its own, so a reload or a second
 * click re-posts an id already used (`FormSubmissionsService`). Carried in
 * the CSRF field, which every form already has, rather than a field of its own.
 */
const SUBMISSION_ID = /^[\w-]{16}$/;
const submissionId = () => randomBytes(12).toString('base64url');
/** How long a browser that saw a page over https keeps to https (HSTS): a year, this host only. */
const HSTS = 'max-age=31536000';

/** A form posted with a missing or wrong `_csrf` field, or from another origin (`crossSite`). */
export class CsrfError extends Error {
  constructor(readonly crossSite = false) {
    super();
  }
}

function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    try {
      out[name] ??= decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      /* a malformed cookie is no cookie */
    }
  }
  return out;
}

/**
 * Cookies, sessions and CSRF tokens of the web pages.
 * - Cookies are HttpOnly, SameSite=Lax, and `Secure` with the `__Host-` prefix
 *   when the pages are served over https (AUTH_URL https, or the request came
 *   over TLS through a trusted proxy).
 * - CSRF: every form carries `_csrf` = HMAC(secret, "csrf"), where the secret is
 *   the session token when logged in, else a random pre-session cookie. An
 *   attacker's page can neither read that cookie nor compute the field. A
 *   one-time submission id follows it (`SUBMISSION_ID`), bound to that secret.
 * - Each pre-session secret has its own cookie, `cw_csrf_<id>`, and its forms'
 *   `_csrf` starts with that id. Page views that arrive together without one
 *   (two tabs on a first visit, a restored window) each set a secret; under
 *   one cookie name the last answer replaced the others' secrets, and their
 *   forms were refused as expired. Under their own names all of them stay,
 *   and a later view uses one of those it finds.
 * - A form posted from another origin is refused whatever its token, as the
 *   API refuses cross-site writes (`isCrossSiteWrite`): a page of the same
 *   site on another port (or a sibling host over http) can set a
 *   pre-session cookie of its own choosing, since cookies ignore ports, and
 *   post the token that goes with it. That logged a browser into the
 *   attacker's account (login CSRF); SameSite=Lax lets same-site posts through.
 */
@Injectable()
export class WebContextService {
  /** The origins of our own pages and API: a form posted from one of them is ours. */
  private readonly origins: ReadonlySet<string>;

  constructor(
    private readonly config: AppConfig,
    private readonly sessions: SessionsService,
  ) {
    this.origins = new Set([new URL(config.baseUrl).origin, new URL(config.authUrl).origin]);
  }

  /** Whether this page is served over https (AUTH_URL https, or TLS through a trusted proxy). */
  secure(req: Request): boolean {
    return this.config.authUrl.startsWith('https:') || req.secure;
  }

  private name(req: Request, base: string): string {
    return this.secure(req) ? `__Host-${base}` : base;
  }

  private cookieOptions(req: Request, maxAge?: number): CookieOptions {
    return { httpOnly: true, sameSite: 'lax', secure: this.secure(req), path: '/', ...(maxAge ? { maxAge } : {}) };
  }

  /** Who is logged in, and the CSRF token for the forms of this response (sets the pre-session cookie when needed). */
  async context(req: Request, res: Response): Promise<WebContext> {
    const jar = cookies(req);
    const sessionToken = jar[this.name(req, 'cw_session')] ?? null;
    const account: Account | null = await this.sessions.account(sessionToken ?? undefined);
    const csrf = (account ? csrfToken(sessionToken!) : this.preSessionCsrf(req, res, jar)) + submissionId();
    return { account, csrf, sessionToken: account ? sessionToken : null };
  }

  /** The form token of a pre-session secret the browser has, or of a new one (setting its cookie). */
  private preSessionCsrf(req: Request, res: Response, jar: Record<string, string>): string {
    const prefix = this.name(req, 'cw_csrf_');
    const held = Object.keys(jar).find((name) => name.startsWith(prefix) && PRE_SESSION_ID.test(name.slice(prefix.length)));
    if (held) return held.slice(prefix.length) + csrfToken(jar[held]);
    const id = randomBytes(9).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    res.cookie(prefix + id, secret, this.cookieOptions(req));
    return id + csrfToken(secret);
  }

  /**
   * The form token a post must carry (without its submission id), and the
   * secret it comes from: the session's, or that of the pre-session cookie
   * `sent` names (undefined when the browser has none).
   */
  private expectedCsrf(req: Request, ctx: WebContext, sent: string): { token: string; secret: string } | undefined {
    if (ctx.account) return { token: csrfToken(ctx.sessionToken!), secret: ctx.sessionToken! };
    const id = sent.slice(0, PRE_SESSION_ID_LENGTH);
    const secret = PRE_SESSION_ID.test(id) ? cookies(req)[this.name(req, `cw_csrf_${id}`)] : undefined;
    return secret === undefined ? undefined : { token: id + csrfToken(secret), secret };
  }

  /** The context of a form post, after checking its CSRF field; with the form's submission id when it has one. */
  async formContext(req: Request, res: Response): Promise<WebContext> {
    if (isCrossSiteWrite(req, this.origins)) throw new CsrfError(true);
    const ctx = await this.context(req, res);
    const sent = (req.body as Record<string, unknown> | undefined)?._csrf;
    if (typeof sent !== 'string') throw new CsrfError();
    const expected = this.expectedCsrf(req, ctx, sent);
    if (expected === undefined || !sameText(sent.slice(0, expected.token.length), expected.token)) throw new CsrfError();
    const id = sent.slice(expected.token.length);
    if (id !== '' && !SUBMISSION_ID.test(id)) throw new CsrfError();
    const scopeHash = tokenHash(expected.secret);
    return id ? { ...ctx, submission: { scopeHash, id } } : ctx;
  }

  /** A logged-in page: the context, or null after redirecting to the login page (which comes back to `here`). */
  async accountPage(req: Request, res: Response, here: string): Promise<AccountContext | null> {
    const ctx = await this.context(req, res);
    if (ctx.account) return ctx as AccountContext;
    res.redirect(303, `/login?next=${encodeURIComponent(here)}`);
    return null;
  }

  /** A logged-in form post: CSRF checked, or null after redirecting to the login page. */
  async accountForm(req: Request, res: Response, back: string): Promise<AccountContext | null> {
    const ctx = await this.formContext(req, res);
    if (ctx.account) return ctx as AccountContext;
    res.redirect(303, `/login?next=${encodeURIComponent(back)}`);
    return null;
  }

  /**
   * A new session with a new token (never one the browser brought: no session
   * fixation), which ends the session the browser's cookie named, whoever's
   * it was: logging in again leaves no earlier session of this browser behind.
   */
  async logIn(req: Request, res: Response, userId: number): Promise<void> {
    const jar = cookies(req);
    const token = await this.sessions.start(userId, jar[this.name(req, 'cw_session')]);
    this.setSession(req, res, token);
    this.clearPreSessionCookies(req, res, jar);
  }

  /**
   * A password change from this browser's session (`SessionsService.changePassword`):
   * every session of the user ends, this browser gets a new one. False, with
   * nothing changed, when the current password was wrong.
   */
  async changePassword(req: Request, res: Response, ctx: AccountContext, passwords: { current: string; next: string }): Promise<boolean> {
    const token = await this.sessions.changePassword(ctx.account.id, { ...passwords, address: req.ip ?? 'unknown' });
    if (token === null) return false;
    this.setSession(req, res, token);
    return true;
  }

  private setSession(req: Request, res: Response, token: string): void {
    res.cookie(this.name(req, 'cw_session'), token, this.cookieOptions(req, SESSION_LIFETIME_MS));
  }

  /**
   * Once logged in, forms carry the session's token and the pre-session
   * secrets serve no form: each first view set one, so they would pile up
   * in the browser, each sent with every request. Cleared with the
   * attributes they were set with (Path=/, the `__Host-` prefix). Only names
   * the cookie syntax can hold are answered, as only those were ever set.
   */
  private clearPreSessionCookies(req: Request, res: Response, jar: Record<string, string>): void {
    const prefix = this.name(req, 'cw_csrf_');
    for (const name of Object.keys(jar)) {
      if (name.startsWith(prefix) && /^[\w-]+$/.test(name.slice(prefix.length))) res.cookie(name, '', { ...this.cookieOptions(req), maxAge: 0 });
    }
  }

  async logOut(req: Request, res: Response, ctx: WebContext): Promise<void> {
    await this.sessions.end(ctx.sessionToken ?? undefined);
    res.clearCookie(this.name(req, 'cw_session'), this.cookieOptions(req));
  }

  /** Sends a page (`sendPage`), with HSTS when it is served over https. */
  send(res: Response, status: number, page: SafeHtml, formTargets: string[] = []): void {
    sendPage(res, status, page, formTargets, this.secure(res.req));
  }
}

/**
 * Sends a page with headers that keep it out of frames (clickjacking on the
 * consent page) and caches (secrets shown once), and a CSP without scripts.
 * `formTargets` widens `form-action` for a form whose answer redirects away.
 * `img-src data:` lets the layout's empty icon (`data:,`) stand in for a
 * /favicon.ico the browser would otherwise ask for on every first visit.
 * Over https (`https`: by default, a request that came over TLS, directly or
 * through a trusted proxy), `Strict-Transport-Security` keeps the browser on
 * https for a year: a later http link or typed address cannot be
 * intercepted before the redirect. Not `includeSubDomains`: AUTH_URL's host
 * does not speak for other hosts under it.
 */
export function sendPage(res: Response, status: number, page: SafeHtml, formTargets: string[] = [], https = res.req.secure): void {
  res.status(status);
  if (https) res.setHeader('Strict-Transport-Security', HSTS);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action ${["'self'", ...formTargets].join(' ')}`,
  );
  res.send(page.value);
}

function csrfToken(secret: string): string {
  return createHmac('sha256', secret).update('cardwork csrf').digest('base64url');
}

/** Constant-time equality; byte lengths compared first (timingSafeEqual throws on unequal ones: a posted `é` made a 500). */
function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The form field a refusal is about, when it names exactly one (the page marks that field). */
export function errorField(error: DomainError): string | undefined {
  return error.errors?.length === 1 ? error.errors[0].field : undefined;
}

/** A form field as text ('' when absent or sent twice). */
export function field(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
}
