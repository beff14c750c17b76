import type { INestApplication } from '@nestjs/common';

export interface RouteInfo {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Express pattern, e.g. `/api/1.0/cards/:id/attributes/:attr`. */
  path: string;
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * Every route the running app serves, read from Express' own router, so a
 * route added by any module is walked by the suites that use this without
 * anyone listing it.
 */
export function listRoutes(app: INestApplication): RouteInfo[] {
  const express = app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
  const stack = (express.router ?? express._router)?.stack ?? [];
  const routes: RouteInfo[] = [];
  for (const layer of stack) {
    if (!layer.route) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') routes.push({ method: method.toUpperCase() as RouteInfo['method'], path: layer.route.path });
    }
  }
  return routes;
}

/** Names of the `:param` segments of a pattern, with the segment before each. */
export function pathParams(path: string): Array<{ name: string; after: string }> {
  const segments = path.split('/');
  return segments.flatMap((s, i) => (s.startsWith(':') ? [{ name: s.slice(1), after: segments[i - 1] }] : []));
}

export function fillPath(path: string, value: (param: { name: string; after: string }) => string | number): string {
  const segments = path.split('/');
  return segments
    .map((s, i) => (s.startsWith(':') ? encodeURIComponent(String(value({ name: s.slice(1), after: segments[i - 1] }))) : s))
    .join('/');
}
