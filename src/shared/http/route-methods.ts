import type { Application, NextFunction, Request, Response } from 'express';

interface RouteMethods {
  pattern: RegExp;
  /** The path's segments, `null` where a `:name` parameter stands. */
  segments: (string | null)[];
  methods: string[];
}

interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
}

/** Each app's routes, read once from its router: they are all there once it serves requests. */
const TABLES = new WeakMap<Application, RouteMethods[]>();

/**
 * An Express route path as Express matches it: `:name` one segment, any
 * case, an optional trailing slash (every route of ours has only `:name`
 * parameters).
 */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

function tableOf(app: Application): RouteMethods[] {

  let table = TABLES.get(app);
  if (!table) {
    const stack = ((app as unknown as { router?: { stack: RouterLayer[] } }).router?.stack ?? []);
    table = stack.flatMap(({ route }) => {
      if (!route || typeof route.path !== 'string') return [];
      // `_all` (a handler for every method) answers other methods itself.
      const methods = Object.keys(route.methods).filter((m) => route.methods[m] && m !== '_all').map((m) => m.toUpperCase());
      const segments = route.path.split('/').map((segment) => (segment.startsWith(':') ? null : segment));
      return methods.length ? [{ pattern: patternOf(route.path), segments, methods }] : [];
    });
    TABLES.set(app, table);
  }
  return table;
}

/**
 * The routes that serve a path among those whose pattern matches it: a route
 * with a literal segment (`/projects/all`) wins over one with a parameter in
 * its place (`/projects/:id`). A parameter beside a literal route is an id
 * (ParseIdPipe: a positive integer), which never takes a word: DELETE
 * `/projects/all` reaches the `:id` route only to answer 404.
 */
function serving(matched: RouteMethods[]): RouteMethods[] {
  return matched.filter(({ segments }) =>
    !matched.some((other) => segments.some((segment, i) => segment === null && other.segments[i] != null)));
}

/**
 * The methods the app's routes take at the request's path, `Allow`'s value
 * (HEAD where GET is, OPTIONS answered by `answerOptions`); empty when no
 * route has the path. Read from Express's router, so every module's routes
 * count without being listed here.
 */
export function allowedMethods(req: Request): string[] {
  // The whole path: `req.path` is relative to where a handler is mounted (Nest mounts its 404 under the prefix).
  const path = req.originalUrl.split('?')[0];
  const methods = new Set<string>();
  const matched = tableOf(req.app).filter(({ pattern }) => pattern.test(path));
  for (const { methods: taken } of serving(matched)) for (const m of taken) methods.add(m);
  if (!methods.size) return [];
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods.add('OPTIONS')].sort();
}

/**
 * `OPTIONS` on an API path a route has: 204 with `Allow` (RFC 9110 §9.3.7),
 * before any credential is asked for (it reveals only what the OpenAPI
 * document shows). Before, it was a 404, as for a path nothing serves.
 */
export function answerOptions(prefix: string) {
  const under = `/${prefix}/`.toLowerCase();
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== 'OPTIONS' || !req.originalUrl.toLowerCase().startsWith(under)) return next();
    const allow = allowedMethods(req);
    if (!allow.length) return next();
    res.status(204).set('Allow', allow.join(', ')).end();
  };
}
