export { WebModule } from './web.module.js';
export { WEB_PATHS } from './http/web-paths.js';
