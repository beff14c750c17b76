import { createHash, timingSafeEqual } from 'node:crypto';
import type { Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';
import { pageHeaders, pageLocation, pageRequest, type PageLocation, type PageRequest } from './pagination.js';

/**
 * Keyset pages of card listings (DESIGN.md §2, issue 15): every card listing
 * answers `X-Service-NextCursor`, and `cursor=<token>` instead of `page`
 * returns the page after the card the token names (`id > last ORDER BY id`):
 * its cost does not depend on how deep the page is, and a walk by cursor
 * neither repeats nor skips a card that exists throughout, while cards are
 * being added.
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
 * Reads `page` or `cursor`, and `per_page`, of a card listing; `cursor` with
 * `page`, or a token that is malformed or from another listing → 400.
 */
export function listingRequest(query: { page?: unknown; per_page?: unknown; cursor?: unknown }, scope: string): ListingRequest {
  const base = pageRequest(query);
  if (query.cursor === undefined) return { ...base, after: null };
  if (query.page !== undefined) throw invalidCursor('cannot be combined with page');
  if (typeof query.cursor !== 'string') throw invalidCursor('must be a single value');
  return { ...base, page: 1, after: decodeCursor(scope, query.cursor) };
}

/**
 * The headers of a card listing page. A `page` request gets the usual
 * pagination headers (pagination.ts) plus `X-Service-NextCursor`. A `cursor`
 * request does not know its page number (counting the cards before it is
 * what keyset pages avoid), so it answers the totals, `X-Service-NextCursor`
 * and a `Link` to the next page by cursor.
 */
export function listingHeaders(p: ListingRequest, info: ListingPageInfo, scope: string, at?: PageLocation): Record<string, string> {
  const next = info.nextAfter === null ? undefined : encodeCursor(scope, info.nextAfter);
  if (p.after === null) {
    const headers = pageHeaders(p, info.total ?? 0, at);
    if (next) headers['X-Service-NextCursor'] = next;
    return headers;
  }
  const headers: Record<string, string> = {};
  if (info.total !== null) {
    const totalPages = String(Math.max(1, Math.ceil(info.total / p.perPage)));
    for (const prefix of ['X-Service-', 'X-Kantree-']) {
      headers[`${prefix}Total`] = String(info.total);
      headers[`${prefix}TotalPages`] = totalPages;
    }
  }
  if (next) {
    headers['X-Service-NextCursor'] = next;
    if (at) headers.Link = `<${cursorUrl(at, next)}>; rel="next"`;
  }
  return headers;
}

function cursorUrl(at: PageLocation, cursor: string): string {
  const query = new URLSearchParams(at.query);
  query.delete('page');
  query.set('cursor', cursor);
  return `${at.publicBase}${at.path}?${query.toString()}`;
}

/** Sets a card listing's headers on the answer; the `Link` is built from the request being answered. */
export function setListingHeaders(res: Response, p: ListingRequest, info: ListingPageInfo, scope: string): void {
  res.set(listingHeaders(p, info, scope, pageLocation(res)));
}
