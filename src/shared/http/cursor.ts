import { createHash, timingSafeEqual } from 'node:crypto';
import type { Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';
import { pageCount, pageHeaders, pageLocation, pageOffset, pageRequest, underBothNames, type PageLocation, type PageRequest } from './pagination.js';

/**
 * Keyset pages of card listings (DESIGN.md §2, issue 15) and of a card's
 * stream: such a listing answers `X-Service-NextCursor`, and `cursor=<token>`
 * instead of `page` returns the page after the item the token names (`id >
 * last ORDER BY id` for the card listings, `id < last ORDER BY id DESC` for
 * the stream, newest first): its cost does not depend on how deep the page
 * is, and a walk by cursor neither repeats nor skips an item that exists
 * throughout, while items are being added or deleted. Its `Link: rel="next"`
 * carries the cursor too, after a `page` request as well: a generic client
 * follows Link, and page numbers shift under it when earlier items go.
 *
 * A token names the last id of a page and the listing it belongs to (the
 * `scope`: route, project and whatever else selects the rows, e.g. the
 * filter). A checksum over both makes a token edited by hand, or taken from
 * another listing, a 400 instead of a silently different page. It is a
 * checksum, not a secret: a token forged with this code can only start a
 * listing the caller may read anyway at another id.
 */

/** A listing request: `page` or a keyset position, and `per_page`. */
export interface ListingRequest extends PageRequest {
  /** The id after which the page starts when the request sent `cursor`; null for `page` requests. */
  after: number | null;
}

/** What a listing hands back to build its headers. */
export interface ListingPageInfo {
  /** Items in all pages (null when the listing cannot tell cheaply). */
  total: number | null;
  /** Id of the page's last item when there is a next page, else null. */
  nextAfter: number | null;
}

const CHECK_LENGTH = 16;
const TOKEN = /^(\d{1,16})\.([A-Za-z0-9_-]{16})$/;

function check(scope: string, lastId: number): string {
  return createHash('sha256').update(`cardwork-cursor\n${scope}\n${lastId}`).digest('base64url').slice(0, CHECK_LENGTH);
}

/** The opaque token for the page after `lastId` in the listing `scope`. */
export function encodeCursor(scope: string, lastId: number): string {
  return Buffer.from(`${lastId}.${check(scope, lastId)}`).toString('base64url');
}

function invalidCursor(message: string): InvalidInputError {
  return new InvalidInputError(`cursor ${message}`, [{ field: 'cursor', message }]);
}

/** The id a token names; 400 when it is malformed or does not belong to `scope`. */
export function decodeCursor(scope: string, token: string): number {
  const m = /^[A-Za-z0-9_-]{1,64}$/.test(token) ? TOKEN.exec(Buffer.from(token, 'base64url').toString('latin1')) : null;
  const id = m ? Number(m[1]) : NaN;
  if (!m || !Number.isSafeInteger(id)) throw invalidCursor('is not a cursor of this listing');
  const expected = Buffer.from(check(scope, id));
  if (!timingSafeEqual(expected, Buffer.from(m[2]))) throw invalidCursor('is not a cursor of this listing');
  return id;
}

/**
 * Reads `page` or `cursor`, and `per_page`, of a keyset listing; `cursor` with
 * `page`, or a token that is malformed or from another listing → 400.
 */
export function listingRequest(query: { page?: unknown; per_page?: unknown; cursor?: unknown }, scope: string): ListingRequest {
  const base = pageRequest(query);
  if (query.cursor === undefined) return { ...base, after: null };
  if (query.page !== undefined) throw invalidCursor('cannot be combined with page');
  if (typeof query.cursor !== 'string') throw invalidCursor('must be a single value');
  return { ...base, page: 1, after: decodeCursor(scope, query.cursor) };
}

/** Where a listing page starts: after a keyset position, or at an offset. */
export type ListingStart = { after: number } | { offset: number };

/** Where the page a request asks for starts: after its cursor's id, or at its page's offset. */
export function listingStart(p: ListingRequest): ListingStart {
  return p.after === null ? { offset: pageOffset(p) } : { after: p.after };
}

/**
 * A page read with one row more than it holds (`perPage + 1`, the extra row
 * telling whether a next page exists): its rows, and the id the next page
 * starts after (null on the last page).
 */
export function keysetPage<T>(rows: T[], perPage: number, idOf: (row: T) => number): { items: T[]; nextAfter: number | null } {
  const items = rows.slice(0, perPage);
  return { items, nextAfter: rows.length > perPage ? idOf(items[items.length - 1]) : null };
}

/**
 * The headers of a keyset listing page. A `page` request gets the usual
 * pagination headers (pagination.ts) plus `X-Service-NextCursor`. A `cursor`
 * request does not know its page number (counting the items before it is
 * what keyset pages avoid), so it answers the totals and
 * `X-Service-NextCursor`. Either way the `Link` to the next page carries the
 * cursor, not a page number: `X-Service-NextPage` stays a number for the
 * original's clients, but a page number skips items when earlier ones are
 * deleted between two requests.
 */
export function listingHeaders(p: ListingRequest, info: ListingPageInfo, scope: string, at?: PageLocation): Record<string, string> {
  const headers = p.after === null ? pageHeaders(p, info.total ?? 0) : totalHeaders(p, info.total);
  if (info.nextAfter === null) return headers;
  const next = encodeCursor(scope, info.nextAfter);
  headers['X-Service-NextCursor'] = next;
  if (at) headers.Link = `<${cursorUrl(at, next)}>; rel="next"`;
  return headers;
}

/** The totals of a cursor page, under both names (pageHeaders' without the page numbers). */
function totalHeaders(p: ListingRequest, total: number | null): Record<string, string> {
  if (total === null) return {};
  return underBothNames({ Total: String(total), TotalPages: String(pageCount(total, p.perPage)) });
}

function cursorUrl(at: PageLocation, cursor: string): string {
  const query = new URLSearchParams(at.query);
  query.delete('page');
  query.set('cursor', cursor);
  return `${at.publicBase}${at.path}?${query.toString()}`;
}

/** Sets a keyset listing's headers on the answer; the `Link` is built from the request being answered. */
export function setListingHeaders(res: Response, p: ListingRequest, info: ListingPageInfo, scope: string): void {
  res.set(listingHeaders(p, info, scope, pageLocation(res)));
}
