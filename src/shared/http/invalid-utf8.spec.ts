import { describe, expect, it } from '@jest/globals';
import { undecodableParameter } from './invalid-utf8.js';

describe('undecodableParameter', () => {
  it('passes plain text, UTF-8 escapes and a % that starts no escape', () => {
    for (const text of ['', 'a=1&b=2', 'title=%C3%A9t%C3%A9+%F0%9F%9A%80', 'title=100%', 'x=%zz%4', 'q=%EF%BF%BD', 'a=%25FF']) {
      expect(undecodableParameter(text)).toBeUndefined();
    }
  });

  it('names the first parameter whose escapes are not UTF-8: lone bytes, surrogates, overlong and cut sequences', () => {
    expect(undecodableParameter('a=1&title=%FF&b=%FE')).toBe('title');
    expect(undecodableParameter('value=%ED%A0%80')).toBe('value');
    expect(undecodableParameter('nul=%C0%80')).toBe('nul');
    expect(undecodableParameter('cut=%E2%82')).toBe('cut');
    expect(undecodableParameter('mixed=100%%C3')).toBe('mixed');
  });

  it('shows a name as the query parser keys it', () => {
    expect(undecodableParameter('my+title=%FF')).toBe('my title');
    expect(undecodableParameter('%FF=1')).toBe('\uFFFD');
    expect(undecodableParameter('%C3%A9=%FF')).toBe('é');
  });
});
