import { OAUTH_ENDPOINT_PATHS } from './oauth-endpoint-bodies.middleware.js';

/**
 * Routes served at the root of AUTH_URL rather than under the API prefix
 * (`app.setGlobalPrefix` excludes them). A route of this module missing here
 * would be served under /api/1.0 instead, and the web e2e suites would miss it.
 */
export const WEB_PATHS = [
  '/',
  'web.css',
  'signup',
  'login',
  'logout',
  'account',
  'account/api-keys',
  'account/api-keys/:id/revoke',
  'account/apps/:id/revoke',
  'account/password',
  'developer',
  'developer/apps',
  'developer/apps/:id/rotate-secret',
  'developer/apps/:id/delete',
  'oauth/authorize',
  'oauth/token',
  'oauth/revoke',
];

/** `/signup`, `/account/api-keys/:id/revoke`… as a pattern of request paths (any segment for `:id`, a trailing slash allowed). */
function pathPattern(path: string): string {
  return `/${path.replace(/^\//, '')}`
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(/:\w+/g, '[^/]+');
}

/** Request paths matching one of `paths` (as Express matches them: any case, a trailing slash allowed). */
function pathsPattern(paths: string[]): RegExp {
  return new RegExp(`^(${paths.join('|')})/?$`, 'i');
}

/** The request paths of every web route (pages, the token and revocation endpoints). */
export const ALL_WEB_PATHS = pathsPattern(WEB_PATHS.map(pathPattern));

/**
 * The request paths of the pages, for a browser: every web path but the
 * token and revocation endpoints, whose clients read RFC 6749 JSON.
 */
export const WEB_PAGE_PATHS = pathsPattern(WEB_PATHS.map(pathPattern).filter((p) => !OAUTH_ENDPOINT_PATHS.includes(p)));

/**
 * The page a form posted to `path` is on, for a link back from its error
 * page: `/account` for its key and app forms and for logout, `/developer`
 * for the app forms, else the path itself (`/login`, `/signup`). The consent
 * form's page needs the authorization request's parameters, which a link
 * cannot be trusted to carry: `/account` (the way back is the application).
 */
export function formPage(path: string): string {
  const page = `/${path.toLowerCase().split('/').filter(Boolean).join('/')}`;
  if (page === '/logout' || page === '/oauth/authorize' || page.startsWith('/account/')) return '/account';
  if (page.startsWith('/developer/')) return '/developer';
  return page;
}
