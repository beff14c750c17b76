export { WebModule } from './web.module.js';
export { WEB_PATHS } from './http/web-paths.js';
export { answerUnknownPaths, answerWebPageErrors, webPageTooLarge, webPageTooSlow } from './http/web-error.filter.js';
export { OAUTH_ENDPOINT_PATHS, oauthEndpointTooSlow, readOAuthEndpointBodies } from './http/oauth-endpoint-bodies.middleware.js';
