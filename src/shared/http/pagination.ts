import type { OpenAPIObject } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';
import { queryCameFromBody } from './query-as-body.middleware.js';

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 1000;
export const MAX_PAGE = 1_000_000_000;

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

function readPositive(raw: unknown, name: string, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const s = String(raw);
  const n = /^\d{1,10}$/.test(s) ? Number(s) : NaN; // a digit more than any max has: then the range decides
  if (!(n >= 1 && n <= max)) {
    throw new InvalidInputError(`${name} must be an integer from 1 to ${max}`, [
      { field: name, message: `must be an integer from 1 to ${max}` },
    ]);
  }
  return n;
}

/** Reads `page` (from 1) and `per_page` (default 100, max 1000); out of range → 400. */
export function pageRequest(query: { page?: unknown; per_page?: unknown }): PageRequest {
  return {
    page: readPositive(query.page, 'page', 1, MAX_PAGE),
    perPage: readPositive(query.per_page, 'per_page', DEFAULT_PER_PAGE, MAX_PER_PAGE),
  };
}

export function pageOffset(p: PageRequest): number {
  return (p.page - 1) * p.perPage;
}

/** Where a listing was asked for, to build its `Link` header. */
export interface PageLocation {
  /** BASE_URL: the public base of API calls. */
  publicBase: string;
  /** The request's path below the API prefix, e.g. `/projects/5/cards`. */
  path: string;
  /** The request's query string, without `?`. */
  query: string;
}

/**
 * The pagination headers of DESIGN.md §2: the X-Service-* ones, the same
 * values under the original's X-Kantree-* names (its clients read those), and
 * `Link: <…>; rel="next"` (RFC 8288), absolute under BASE_URL and keeping the
 * other query parameters. NextPage and Link are absent on the last page.
 */
export function pageHeaders(p: PageRequest, total: number, at?: PageLocation): Record<string, string> {
  const totalPages = pageCount(total, p.perPage);
  const values: Record<string, string | undefined> = {
    Page: String(p.page),
    NextPage: p.page < totalPages ? String(p.page + 1) : undefined,
    Total: String(total),
    TotalPages: String(totalPages),
  };
  const headers = underBothNames(values);
  if (values.NextPage && at) headers.Link = `<${pageUrl(at, values.NextPage)}>; rel="next"`;
  return headers;
}

/** How many pages `total` items fill, `perPage` a page: at least 1. */
export function pageCount(total: number, perPage: number): number {
  return Math.max(1, Math.ceil(total / perPage));
}

/**
 * Each pagination value as an X-Service-* header and again under the
 * original's X-Kantree-* name (all X-Service-* first); undefined values are
 * left out.
 */
export function underBothNames(values: Record<string, string | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const prefix of ['X-Service-', 'X-Kantree-']) {
    for (const [name, value] of Object.entries(values)) if (value !== undefined) headers[prefix + name] = value;
  }
  return headers;
}

function pageUrl(at: PageLocation, page: string): string {
  const query = new URLSearchParams(at.query);
  query.set('page', page);
  return `${at.publicBase}${at.path}?${query.toString()}`;
}

/** Express setting through which configureApp hands the public base and the local API prefix to listings. */
export const PAGE_LINK_SETTING = 'cardwork:page-links';

export interface PageLinkSetting {
  publicBase: string;
  /** The local path prefix of API routes, e.g. `/api/1.0`. */
  prefix: string;
}

/** Sets the pagination headers on a listing's answer; the `Link` is built from the request being answered. */
export function setPageHeaders(res: Response, p: PageRequest, total: number): void {
  res.set(pageHeaders(p, total, pageLocation(res)));
}

/** Where the request being answered was sent, for `Link` headers; undefined outside the API prefix. */
export function pageLocation(res: Response): PageLocation | undefined {
  const setting = res.app?.get(PAGE_LINK_SETTING) as PageLinkSetting | undefined;
  const url = res.req?.originalUrl;
  if (!setting || !url?.startsWith(setting.prefix)) return undefined;
  const q = url.indexOf('?');
  return {
    publicBase: setting.publicBase,
    path: url.slice(setting.prefix.length, q === -1 ? undefined : q),
    // A listing asked in a body links to the next page with its parameters in the URL.
    query: queryCameFromBody(res.req) ? bodyQueryString(res.req.query) : q === -1 ? '' : url.slice(q + 1),
  };
}

/** The text parameters of a query taken from a body (a listing refused any other kind before answering). */
function bodyQueryString(query: Request['query']): string {
  return new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => typeof e[1] === 'string')).toString();
}

/** What each pagination header holds; `cursor` for a listing that takes it, whose cursor pages know no page number. */
function headerDocs(cursor: boolean): Record<string, string> {
  const byCursor = cursor ? ' and on a page asked for by `cursor`' : '';
  return {
    Page: cursor ? 'this page (from 1); absent on a page asked for by `cursor`' : 'this page (from 1)',
    NextPage: `the next page; absent on the last page${byCursor}`,
    Total: 'items in all pages',
    TotalPages: 'number of pages (at least 1)',
  };
}

const LINK_DOCS = {
  page: '`<absolute URL of the next page>; rel="next"` (RFC 8288); absent on the last page',
  cursor:
    '`<absolute URL of the next page>; rel="next"` (RFC 8288), to follow as it is: it carries the next page\'s `cursor` (after a `page` request too), so a walk skips nothing when earlier items are deleted; absent on the last page',
};

/** The pagination headers of a listing's 200 answer, with the cursor's where it takes one. */
function pageHeaderObjects(cursor: boolean): Record<string, { description: string; schema: { type: 'string' } }> {
  const headers: Record<string, { description: string; schema: { type: 'string' } }> = {};
  for (const prefix of ['X-Service-', 'X-Kantree-']) {
    for (const [name, description] of Object.entries(headerDocs(cursor))) {
      const alias = prefix === 'X-Kantree-' ? ` (the X-Service-${name} value, under the original's name)` : '';
      headers[prefix + name] = { description: description + alias, schema: { type: 'string' } };
    }
  }
  headers.Link = { description: cursor ? LINK_DOCS.cursor : LINK_DOCS.page, schema: { type: 'string' } };
  if (cursor) {
    headers['X-Service-NextCursor'] = {
      description: 'opaque token: send it as `cursor` (instead of `page`) for the next page by keyset; absent on the last page',
      schema: { type: 'string' },
    };
  }
  return headers;
}

/**
 * Adds the pagination headers to the 200 answer of every operation that takes
 * `per_page` in its query, so each listing documents them (new ones included)
 * without a decorator per route.
 */
export function documentPagination(document: OpenAPIObject): void {
  const hasQuery = (get: NonNullable<(typeof document.paths)[string]['get']>, name: string) =>
    get.parameters?.some((p) => 'name' in p && p.name === name && p.in === 'query');
  for (const { get } of Object.values(document.paths)) {
    const ok = get?.responses['200'];
    if (!get || !hasQuery(get, 'per_page') || !ok || '$ref' in ok) continue;
    ok.headers = { ...ok.headers, ...pageHeaderObjects(Boolean(hasQuery(get, 'cursor'))) };
  }
}
