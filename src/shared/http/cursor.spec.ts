import { describe, expect, it } from '@jest/globals';
import { InvalidInputError } from '../domain/domain-error.js';
import { decodeCursor, encodeCursor, keysetPage, listingHeaders, listingRequest, listingStart } from './cursor.js';

describe('cursor tokens', () => {
  it('round-trip within their listing', () => {
    const token = encodeCursor('projects/5/cards', 123456789);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor('projects/5/cards', token)).toBe(123456789);
  });

  it('are refused by another listing, and when edited', () => {
    const token = encodeCursor('projects/5/cards', 42);
    expect(() => decodeCursor('projects/6/cards', token)).toThrow(InvalidInputError);
    const [, check] = Buffer.from(token, 'base64url').toString().split('.');
    expect(() => decodeCursor('projects/5/cards', Buffer.from(`43.${check}`).toString('base64url'))).toThrow(InvalidInputError);
  });

  it.each(['', '=', 'abc', '9'.repeat(70), Buffer.from('1e3.aaaaaaaaaaaaaaaa').toString('base64url')])('refuses %p', (token) => {
    expect(() => decodeCursor('s', token)).toThrow(InvalidInputError);
  });
});

describe('listingRequest', () => {
  it('reads page or cursor, never both', () => {
    expect(listingRequest({ page: '2', per_page: '10' }, 's')).toEqual({ page: 2, perPage: 10, after: null });
    expect(listingRequest({ cursor: encodeCursor('s', 7) }, 's')).toEqual({ page: 1, perPage: 100, after: 7 });
    expect(() => listingRequest({ cursor: encodeCursor('s', 7), page: '1' }, 's')).toThrow(InvalidInputError);
    expect(() => listingRequest({ cursor: ['a', 'b'] }, 's')).toThrow(InvalidInputError);
  });
});

describe('listingStart and keysetPage', () => {
  it('start a page at its offset or after its cursor, and tell the next page by the extra row', () => {
    expect(listingStart({ page: 3, perPage: 10, after: null })).toEqual({ offset: 20 });
    expect(listingStart({ page: 1, perPage: 10, after: 42 })).toEqual({ after: 42 });
    expect(keysetPage([{ id: 9 }, { id: 7 }, { id: 4 }], 2, (r) => r.id)).toEqual({ items: [{ id: 9 }, { id: 7 }], nextAfter: 7 });
    expect(keysetPage([{ id: 9 }, { id: 7 }], 2, (r) => r.id)).toEqual({ items: [{ id: 9 }, { id: 7 }], nextAfter: null });
    expect(keysetPage([], 2, (r: { id: number }) => r.id)).toEqual({ items: [], nextAfter: null });
  });
});

describe('listingHeaders', () => {
  const at = { publicBase: 'https://x.test/api/1.0', path: '/projects/5/cards', query: 'per_page=2&cursor=old' };

  it('links the next page by cursor after a cursor request, with the totals but no page number', () => {
    const next = encodeCursor('s', 9);
    expect(listingHeaders({ page: 1, perPage: 2, after: 3 }, { total: 5, nextAfter: 9 }, 's', at)).toEqual({
      'X-Service-Total': '5',
      'X-Service-TotalPages': '3',
      'X-Kantree-Total': '5',
      'X-Kantree-TotalPages': '3',
      'X-Service-NextCursor': next,
      Link: `<https://x.test/api/1.0/projects/5/cards?per_page=2&cursor=${next}>; rel="next"`,
    });
  });

  it('adds the cursor to page headers, links the next page by it, and neither on the last page', () => {
    const h = listingHeaders({ page: 2, perPage: 2, after: null }, { total: 5, nextAfter: 9 }, 's', { ...at, query: 'per_page=2&page=2' });
    const next = encodeCursor('s', 9);
    expect(h).toMatchObject({ 'X-Service-Page': '2', 'X-Service-NextPage': '3', 'X-Kantree-NextPage': '3', 'X-Service-NextCursor': next });
    // A page number would skip items when earlier ones are deleted: the link carries the cursor.
    expect(h.Link).toBe(`<https://x.test/api/1.0/projects/5/cards?per_page=2&cursor=${next}>; rel="next"`);
    const last = listingHeaders({ page: 1, perPage: 2, after: 3 }, { total: 5, nextAfter: null }, 's', at);
    expect(Object.keys(last)).not.toContain('X-Service-NextCursor');
    expect(Object.keys(last)).not.toContain('Link');
  });
});
