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
  'developer',
  'developer/apps',
  'developer/apps/:id/rotate-secret',
  'developer/apps/:id/delete',
  'oauth/authorize',
  'oauth/token',
  'oauth/revoke',
];
