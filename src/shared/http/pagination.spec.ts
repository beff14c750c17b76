import { describe, expect, it } from '@jest/globals';
import { pageOffset, pageRequest } from './pagination.js';
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
