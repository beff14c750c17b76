import type { Account, ApiKeySummary, AuthorizedApp, OAuthClientSummary } from '../../identity/index.js';
import { safeNext } from './next-target.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';

/** What every page needs: who is logged in and the form token. */
export interface PageContext {
  account: Account | null;
  csrf: string;
}

const SCOPE_TEXT: Record<string, string> = {
  read_user: 'see your user name and email address',
  read_workspace: 'read your teams, projects and cards',
  write_workspace: 'read and change your teams, projects and cards',
};

export const csrfField = (ctx: PageContext) => html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`;

/**
 * A link to the login or sign-up page that keeps where the user was going
 * (`next`, a path on this site only, as the login's redirect takes it): a new
 * user sent to log in by an application's authorization request signs up
 * and still reaches its consent page.
 */
function withNext(path: '/login' | '/signup', next: string | undefined): string {
  const target = safeNext(next);
  return target === '/account' ? path : `${path}?next=${encodeURIComponent(target)}`;
}

/*
 * Names people chose (applications, API keys, users) sit inside <bdi> where
 * they run within a sentence: even a name stored before bidi controls were
 * refused cannot reorder the page's own words around it. A table cell or
 * heading holding only the name is a paragraph of its own already.
 */

/** The logged-in navigation's pages; the one shown is marked `aria-current="page"`. */
type NavPage = '/account' | '/developer';

const navLink = (path: NavPage, text: string, current: NavPage | undefined) =>
  html`<a href="${path}"${current === path ? html` aria-current="page"` : null}>${text}</a>`;

/** What a page tells its layout besides its title and body. */
interface PageOptions {
  /** Where the login and sign-up links of a logged-out visitor come back to. */
  next?: string;
  /** The navigation link of this page. */
  current?: NavPage;
  /** The page shows a form's error: the browser tab and a screen reader's first words say so. */
  error?: boolean;
}

/**
 * A page. The skip link is the first thing a keyboard reaches, so it need
 * not tab through the navigation on every page. The empty data: icon stops
 * browsers asking for /favicon.ico (a 404 on every first visit).
 */
export function layout(ctx: PageContext, title: string, body: SafeHtml, { next, current, error }: PageOptions = {}): SafeHtml {
  const nav = ctx.account
    ? html`<nav>${navLink('/account', 'Account', current)} ${navLink('/developer', 'Developer', current)}
        <form method="post" action="/logout" class="inline">${csrfField(ctx)}<button type="submit">Log out <bdi>${ctx.account.username}</bdi></button></form></nav>`
    : html`<nav><a href="${withNext('/login', next)}">Log in</a> <a href="${withNext('/signup', next)}">Sign up</a></nav>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${error ? 'Error: ' : ''}${title} · cardwork</title><link rel="stylesheet" href="/web.css"><link rel="icon" href="data:,"></head>
<body><a class="skip-link" href="#main">Skip to main content</a><header><strong>cardwork</strong>${nav}</header><main id="main"><h1>${title}</h1>${body}</main></body></html>`;
}

const alert = (message: string) => html`<p class="error" role="alert">${message}</p>`;

/**
 * A form's error; `id` (on a box around it, the alert's markup stays as it
 * was) is what the field it is about names in aria-describedby.
 */
const problem = (message: string | undefined, id = 'form-error') => (message ? html`<div id="${id}">${alert(message)}</div>` : null);

/**
 * On the field the page's error is about (`errorField`, a form field's
 * name), the attributes that tie the two for a screen reader.
 */
const invalidIf = (name: string, errorField: string | undefined, errorId = 'form-error') =>
  name === errorField ? html` aria-invalid="true" aria-describedby="${errorId}"` : null;
/** Words only a screen reader says: what a button repeated on every row acts on (WCAG 2.4.6). */
const hidden = (text: HtmlValue) => html`<span class="visually-hidden">${text}</span>`;
/** The header of a table's actions column, empty to the eye (axe: empty-table-header). */
const actionsHeader = html`<th>${hidden('Actions')}</th>`;
const notice = (message: string | undefined) => (message ? html`<p class="notice" role="status">${message}</p>` : null);

export function signUpPage(
  ctx: PageContext,
  opts: { error?: string; errorField?: string; username?: string; email?: string; next?: string },
): SafeHtml {
  const bad = (name: string) => invalidIf(name, opts.errorField);
  return layout(
    ctx,
    'Sign up',
    html`${problem(opts.error)}
<form method="post" action="/signup">${csrfField(ctx)}
  <input type="hidden" name="next" value="${opts.next ?? ''}">
  <label>User name <input name="username" required maxlength="64" autocomplete="username" value="${opts.username ?? ''}"${bad('username')}></label>
  <label>Email <input name="email" type="email" required autocomplete="email" value="${opts.email ?? ''}"${bad('email')}></label>
  <label>Password (at least 8 characters, not a common one nor your user name) <input name="password" type="password" required minlength="8" autocomplete="new-password"${bad('password')}></label>
  <button type="submit">Create account</button>
</form>
<p>Already have an account? <a href="${withNext('/login', opts.next)}">Log in</a>.</p>`,
    { next: opts.next, error: !!opts.error },
  );
}

/** `next` as on the sign-up page: an existing user who came to sign up still gets back to where they were going. */
export function signUpClosedPage(ctx: PageContext, next?: string): SafeHtml {
  return layout(
    ctx,
    'Sign-up is closed',
    html`<p>This instance does not accept new accounts. Ask its administrator for one.</p>
<p>Already have an account? <a href="${withNext('/login', next)}">Log in</a>.</p>`,
    { next },
  );
}

export function logInPage(ctx: PageContext, opts: { error?: string; login?: string; next?: string }): SafeHtml {
  return layout(
    ctx,
    'Log in',
    html`${problem(opts.error)}
<form method="post" action="/login">${csrfField(ctx)}
  <input type="hidden" name="next" value="${opts.next ?? ''}">
  <label>User name or email <input name="login" required autocomplete="username" value="${opts.login ?? ''}"></label>
  <label>Password <input name="password" type="password" required autocomplete="current-password"></label>
  <button type="submit">Log in</button>
</form>
<p>No account yet? <a href="${withNext('/signup', opts.next)}">Sign up</a>.</p>`,
    { next: opts.next, error: !!opts.error },
  );
}

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 16) + ' UTC' : 'never');

/** What the account page shows besides the account itself. */
export interface AccountView {
  keys: ApiKeySummary[];
  apps: AuthorizedApp[];
  /** A key just created, shown this once. */
  created?: { name: string; key: string };
  /** What the last form did (after its redirect). */
  notice?: string;
  /** Why a form other than the password's was refused (the API key limit), at the top. */
  error?: string;
  /** Why the new key's name was refused, beside its form, which shows the name sent. */
  keyError?: string;
  keyName?: string;
  /** Why the password form was refused. */
  passwordError?: string;
  /** The password form's field `passwordError` is about. */
  passwordErrorField?: string;
}

export function accountPage(ctx: PageContext, view: AccountView): SafeHtml {
  const a = ctx.account!;
  const created = view.created;
  return layout(
    ctx,
    'Account',
    html`${view.error ? alert(view.error) : null}
<p><bdi>${a.displayName}</bdi> (<strong><bdi>${a.username}</bdi></strong>, <bdi>${a.email}</bdi>)${a.isAdmin ? ' · instance administrator' : ''}</p>
${notice(view.notice)}
${created ? html`<div class="secret" role="status"><p>New API key <bdi><strong>${created.name || '(no name)'}</strong></bdi>. Copy it now: it is shown only once.</p><code id="new-api-key">${created.key}</code></div>` : null}
${apiKeysSection(ctx, view.keys, view.keyError, view.keyName)}
${authorizedAppsSection(ctx, view.apps)}
${passwordSection(ctx, view.passwordError, view.passwordErrorField)}`,
    { current: '/account', error: !!(view.error || view.keyError || view.passwordError) },
  );
}

function apiKeysSection(ctx: PageContext, keys: ApiKeySummary[], error?: string, name?: string): SafeHtml {
  const rows = keys.map(
    (k) => html`<tr><td>${k.name || '(no name)'}</td><td><code>${k.prefix}…</code></td><td>${when(k.created_at)}</td>
      <td>${when(k.last_used_at)}</td>
      <td>${
        k.revoked_at
          ? html`revoked ${when(k.revoked_at)}`
          : html`<form method="post" action="/account/api-keys/${k.id}/revoke" class="inline">${csrfField(ctx)}<button type="submit">Revoke${hidden(html` key <bdi>${k.name || `${k.prefix}…`}</bdi>`)}</button></form>`
      }</td></tr>`,
  );
  return html`<h2>API keys</h2>
<p>Send a key as the user name of HTTP Basic authentication (empty password) or in the <code>X-Api-Key</code> header. A key has your full access.</p>
${keys.length ? html`<div class="table-scroll"><table><thead><tr><th>Name</th><th>Prefix</th><th>Created</th><th>Last used</th>${actionsHeader}</tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>No API keys yet.</p>`}
${problem(error, 'key-error')}
<form method="post" action="/account/api-keys">${csrfField(ctx)}
  <label>Name of a new key <input name="name" maxlength="200" placeholder="laptop"${name ? html` value="${name}"` : null}${error ? invalidIf('name', 'name', 'key-error') : null}></label>
  <button type="submit">Create API key</button>
</form>`;
}

function authorizedAppsSection(ctx: PageContext, apps: AuthorizedApp[]): SafeHtml {
  const rows = apps.map(
    (app) => html`<tr><td>${app.name}</td><td>${app.scopes.map((s) => html`<code>${s}</code> `)}</td><td>${when(app.authorizedAt)}</td>
      <td>${when(app.lastIssuedAt)}</td>
      <td><form method="post" action="/account/apps/${app.id}/revoke" class="inline">${csrfField(ctx)}<button type="submit">Revoke access${hidden(html` for <bdi>${app.name}</bdi>`)}</button></form></td></tr>`,
  );
  return html`<h2>Authorized applications</h2>
<p>Applications you allowed to act for you. Revoking one ends its access at once: its tokens stop working, and it must ask you again.</p>
${
  apps.length
    ? html`<div class="table-scroll"><table id="authorized-apps"><thead><tr><th>Application</th><th>Scopes</th><th>Authorized</th><th>Last token issued</th>${actionsHeader}</tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p>No application has access to your account.</p>`
}`;
}

function passwordSection(ctx: PageContext, error: string | undefined, errorField: string | undefined): SafeHtml {
  const bad = (name: string) => invalidIf(name, errorField, 'password-error');
  return html`<h2>Change password</h2>
<p>Every other browser logged in to your account is logged out; this one stays. Your API keys and authorized applications keep working: revoke them above if they may be in the wrong hands.</p>
${problem(error, 'password-error')}
<form method="post" action="/account/password">${csrfField(ctx)}
  <label>Current password <input name="current_password" type="password" required autocomplete="current-password"${bad('current_password')}></label>
  <label>New password (at least 8 characters, not a common one nor your user name) <input name="new_password" type="password" required minlength="8" autocomplete="new-password"${bad('new_password')}></label>
  <button type="submit">Change password</button>
</form>`;
}

export interface ShownSecret {
  app: OAuthClientSummary;
  secret: string | null;
  what: 'registered' | 'rotated';
}

export function developerPage(
  ctx: PageContext,
  apps: OAuthClientSummary[],
  opts: { shown?: ShownSecret; notice?: string; error?: string; errorField?: string; form?: Record<string, string> },
): SafeHtml {
  const shown = opts.shown;
  const bad = (name: string) => invalidIf(name, opts.errorField);
  const list = apps.map(
    (app) => html`<section class="app"><h3><bdi>${app.name}</bdi></h3>
  <dl><dt>Client id</dt><dd><code>${app.clientId}</code></dd>
  <dt>Type</dt><dd>${app.confidential ? 'confidential (has a client secret)' : 'public (no secret; PKCE required)'}</dd>
  <dt>Redirect URIs</dt><dd>${app.redirectUris.map((u) => html`<code>${u}</code><br>`)}</dd></dl>
  ${app.confidential ? html`<form method="post" action="/developer/apps/${app.id}/rotate-secret" class="inline">${csrfField(ctx)}<button type="submit">Rotate secret${hidden(html` of <bdi>${app.name}</bdi>`)}</button></form>` : null}
  ${deleteApp(ctx, app)}
</section>`,
  );
  return layout(
    ctx,
    'Developer',
    html`${notice(opts.notice)}${
      shown
        ? html`<div class="secret" role="status"><p>Application <bdi><strong>${shown.app.name}</strong></bdi> ${shown.what}.</p>
  <p>Client id: <code id="client-id">${shown.app.clientId}</code></p>
  ${shown.secret ? html`<p>Client secret (copy it now: it is shown only once): <code id="client-secret">${shown.secret}</code></p>` : html`<p>Public client: no secret. Use PKCE (S256).</p>`}</div>`
        : null
    }
<h2>Your applications</h2>
${apps.length ? list : html`<p>No applications yet.</p>`}
<h2>Register an application</h2>
${problem(opts.error)}
<form method="post" action="/developer/apps">${csrfField(ctx)}
  <label>Name (shown to users on the consent page) <input name="name" required maxlength="100" value="${opts.form?.name ?? ''}"${bad('name')}></label>
  <label>Redirect URIs, one per line (matched exactly) <textarea name="redirect_uris" required rows="3"${bad('redirect_uris')}>${opts.form?.redirect_uris ?? ''}</textarea></label>
  <fieldset><legend>Type</legend>
    <label><input type="radio" name="client_type" value="confidential" ${opts.form?.client_type === 'public' ? '' : html`checked`}${bad('client_type')}> Confidential: runs on a server and keeps a secret</label>
    <label><input type="radio" name="client_type" value="public" ${opts.form?.client_type === 'public' ? html`checked` : ''}${bad('client_type')}> Public: a browser or native app, no secret, PKCE required</label>
  </fieldset>
  <button type="submit">Register</button>
</form>
<p>How to run the flow: <code>docs/OAUTH.md</code>.</p>`,
    { current: '/developer', error: !!opts.error },
  );
}

/**
 * Deleting an app ends every token and authorization it has, so the first
 * click only opens the confirmation (a <details>: no script needed), whose
 * button says what goes.
 */
function deleteApp(ctx: PageContext, app: OAuthClientSummary): SafeHtml {
  return html`<details class="confirm"><summary>Delete${hidden(html` <bdi>${app.name}</bdi>`)}…</summary>
    <p>The application is removed and every token its users gave <bdi>${app.name}</bdi> stops working at once. This cannot be undone.</p>
    <form method="post" action="/developer/apps/${app.id}/delete">${csrfField(ctx)}<button type="submit" class="danger">Delete <bdi>${app.name}</bdi> and all its tokens</button></form>
  </details>`;
}

/**
 * Where an approval sends the browser, as the user should judge it: the
 * origin (scheme, host, port; an IDN host in its xn-- form, as it parses),
 * or for a native app's private scheme the scheme itself.
 */
function destination(redirectUri: string): string {
  try {
    const url = new URL(redirectUri);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
  } catch {
    return redirectUri;
  }
}

/**
 * The consent page says who asks (name and client id) and where the answer
 * goes (the redirect URI's origin, prominently, then the whole URI), as
 * GitHub's and Google's do: a name can be anything, the destination cannot.
 */
export function consentPage(
  ctx: PageContext,
  client: { clientId: string; name: string },
  scopes: string[],
  params: Record<string, string>,
): SafeHtml {
  const hidden = Object.entries(params).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  const redirectUri = params.redirect_uri ?? '';
  return layout(
    ctx,
    'Authorize application',
    html`<p><bdi><strong id="app-name">${client.name}</strong></bdi> asks to act as <strong><bdi>${ctx.account!.username}</bdi></strong>. It will be able to:</p>
<ul id="scopes">${scopes.map((s) => html`<li><code>${s}</code>: ${SCOPE_TEXT[s] ?? s}</li>`)}</ul>
<dl class="consent">
  <dt>You will be sent to</dt><dd><strong id="redirect-origin" class="wrap destination">${destination(redirectUri)}</strong></dd>
  <dt>Full redirect address</dt><dd><code id="redirect-uri" class="wrap">${redirectUri}</code></dd>
  <dt>Application's client id</dt><dd><code id="client-id" class="wrap">${client.clientId}</code></dd>
</dl>
<form method="post" action="/oauth/authorize">${csrfField(ctx)}${hidden}
  <button type="submit" name="decision" value="approve">Approve</button>
  <button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** An error page; `back` is a page of this site to offer a link to. */
export function errorPage(ctx: PageContext, title: string, message: string, back?: string): SafeHtml {
  return layout(ctx, title, html`${alert(message)}${back ? html`<p><a href="${back}">Go to ${back}</a></p>` : null}`);
}

/**
 * The one stylesheet. Small screens (375 px): the header and its nav wrap,
 * tables scroll inside their own box, and names, URIs and paths (which have
 * no spaces to break at) break anywhere rather than widen the page.
 */
export const WEB_CSS = `*,*::before,*::after{box-sizing:border-box}
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:.25rem 1rem;padding:.75rem 1rem;background:#1d2330;color:#fff}
header a{color:#fff}header nav{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem}header nav button{margin:0}
main{max-width:52rem;margin:1.5rem auto;padding:0 1rem;overflow-wrap:anywhere}
label{display:block;margin:.75rem 0}input:not([type=radio]),textarea{display:block;width:100%;max-width:32rem;padding:.4rem;font:inherit}
button{font:inherit;padding:.4rem .9rem;margin:.25rem .25rem .25rem 0;cursor:pointer;overflow-wrap:anywhere}
form.inline{display:inline}fieldset{max-width:32rem;border:1px solid #ccd}
.table-scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem;border-bottom:1px solid #dde;vertical-align:top}
.error{color:#a00;font-weight:600}.notice{color:#075;font-weight:600}.secret{background:#fff8d8;border:1px solid #e5c860;padding:.5rem 1rem;margin:1rem 0}
.secret code{word-break:break-all;font-size:1.05rem}section.app{background:#fff;border:1px solid #dde;padding:.5rem 1rem;margin:.75rem 0}
dt{font-weight:600}dd{margin:0 0 .5rem}
.wrap{overflow-wrap:anywhere}.destination{font-size:1.25rem}
.visually-hidden,.skip-link:not(:focus){position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.skip-link:focus{position:absolute;top:.5rem;left:.5rem;z-index:1;padding:.4rem .9rem;background:#fff;color:#1d2330}
details.confirm{display:inline-block;vertical-align:top}details.confirm summary{cursor:pointer;padding:.4rem .9rem;margin:.25rem 0;border:1px solid #999;border-radius:3px;background:#f0f0f0}
details.confirm[open]{display:block}.danger{background:#a00;color:#fff;border:1px solid #800}`;
