import { describe, expect, it } from '@jest/globals';
import { basicUsername } from './credentials.js';

const basic = (decoded: string) => `Basic ${Buffer.from(decoded).toString('base64')}`;

describe('basicUsername', () => {
  it('reads the key from "key:" (the spec) and from "key" with no colon (the original\'s clients)', () => {
    expect(basicUsername(basic('cwk_abc:'))).toBe('cwk_abc');
    expect(basicUsername(basic('cwk_abc'))).toBe('cwk_abc');
  });

  it.each([
    ['a password', basic('cwk_abc:secret')],
    ['an empty username', basic(':')],
    ['an empty value', 'Basic '],
    ['another scheme', 'Bearer cwk_abc'],
    ['no header', undefined],
  ])('finds no key with %s', (_label, header) => {
    expect(basicUsername(header)).toBeUndefined();
  });
});
