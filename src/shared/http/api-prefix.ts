/** Where the API's routes are served (Nest's global prefix); the web pages and /oauth/* are not under it. */
export const API_PREFIX = 'api/1.0';
