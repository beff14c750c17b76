import { describe, expect, it } from '@jest/globals';
import { findUnsafeString } from './safe-strings.middleware.js';

describe('findUnsafeString', () => {
  it('accepts ordinary text, emoji and nested values', () => {
    expect(findUnsafeString({ title: 'Plan 🚀', list: ['a', { b: 'é' }], n: 1, x: null })).toBeUndefined();
  });
  it('names the field holding a NUL', () => {
    expect(findUnsafeString({ attributes: { Notes: 'a\u0000b' } })).toBe('attributes.Notes');
    expect(findUnsafeString('x\u0000')).toBe('(body)');
  });
  it('finds unpaired surrogates in values and keys', () => {
    expect(findUnsafeString({ title: '\ud800' })).toBe('title');
    expect(findUnsafeString({ title: 'x\udc00' })).toBe('title');
    expect(findUnsafeString({ ['k\u0000']: 1 })).toBe('k\u0000');
  });
});
