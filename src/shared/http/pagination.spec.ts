import { describe, expect, it } from '@jest/globals';
import { pageHeaders, pageOffset, pageRequest } from './pagination.js';
import { InvalidInputError } from '../domain/domain-error.js';

describe('pageRequest', () => {
  it('defaults to page 1 of 100', () => {
    expect(pageRequest({})).toEqual({ page: 1, perPage: 100 });
  });
  it('reads strings from the query', () => {
    const p = pageRequest({ page: '3', per_page: '20' });
    expect(p).toEqual({ page: 3, perPage: 20 });
    expect(pageOffset(p)).toBe(40);
  });
  it.each(['0', '-1', 'x', '1.5', '1001'])('refuses per_page=%s', (v) => {
    expect(() => pageRequest({ per_page: v })).toThrow(InvalidInputError);
  });
});

describe('pageHeaders', () => {
  const at = { publicBase: 'https://cards.example/api/1.0', path: '/projects/5/cards', query: 'with_archived=true&page=1&per_page=50' };

  it('repeats the X-Service-* values under the X-Kantree-* names and links the next page', () => {
    expect(pageHeaders({ page: 1, perPage: 50 }, 120, at)).toEqual({
      'X-Service-Page': '1',
      'X-Service-NextPage': '2',
      'X-Service-Total': '120',
      'X-Service-TotalPages': '3',
      'X-Kantree-Page': '1',
      'X-Kantree-NextPage': '2',
      'X-Kantree-Total': '120',
      'X-Kantree-TotalPages': '3',
      Link: '<https://cards.example/api/1.0/projects/5/cards?with_archived=true&page=2&per_page=50>; rel="next"',
    });
  });

  it('adds page to a query that had none and keeps encoded values', () => {
    const h = pageHeaders({ page: 1, perPage: 100 }, 101, { ...at, query: 'filter=a%20b%26c' });
    expect(h.Link).toBe('<https://cards.example/api/1.0/projects/5/cards?filter=a+b%26c&page=2>; rel="next"');
  });

  it('has neither NextPage nor Link on the last page, and one page when empty', () => {
    const last = pageHeaders({ page: 3, perPage: 50 }, 120, at);
    expect(Object.keys(last).filter((k) => /NextPage|Link/.test(k))).toEqual([]);
    expect(pageHeaders({ page: 1, perPage: 100 }, 0)).toMatchObject({ 'X-Kantree-TotalPages': '1', 'X-Kantree-Total': '0' });
  });
});
