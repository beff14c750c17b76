import { describe, expect, it } from '@jest/globals';
import { isRegisteredRedirectUri, redirectUriProblem } from './redirect-uri.js';

describe('redirectUriProblem', () => {
  it.each([
    'https://app.example.com/callback',
    'https://app.example.com/',
    'https://app.example.com/cb?client=web&x=1',
    'https://app.example.com:8443/cb',
    'http://127.0.0.1:8080/cb',
    'http://localhost:3000/oauth/callback',
    'http://[::1]:8080/cb',
    'com.example.app:/oauth',
    'com.example.app:/cb',
    'com.example.app://callback',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeNull();
  });

  it.each([
    ['https:evil.com/cb', 'https://evil.com/cb'],
    ['https://good.com\\@evil.com/', 'https://good.com/@evil.com/'],
    ['https:/evil.com/cb', 'https://evil.com/cb'],
    ['https://app.example.com', 'https://app.example.com/'],
    ['https://App.Example.com/cb', 'https://app.example.com/cb'],
    ['https://app.example.com:443/cb', 'https://app.example.com/cb'],
    ['https://app.example.com/a/../cb', 'https://app.example.com/cb'],
    ['https://app.example.com/caf\u00e9', 'https://app.example.com/caf%C3%A9'],
    ['HTTP://127.0.0.1/cb', 'http://127.0.0.1/cb'],
  ])('refuses %s, which parses as %s', (uri, parsed) => {
    expect(redirectUriProblem(uri)).toBe(`is read as ${parsed}; register it in that form if that is where it should lead`);
  });

  it('still names the first rule a URI breaks', () => {
    expect(redirectUriProblem('http://evil.com/cb')).toMatch(/must use https/);
    expect(redirectUriProblem('javascript:alert(1)')).toMatch(/must use https/);
    expect(redirectUriProblem('https://user@app.example.com/cb')).toMatch(/credentials/);
    expect(redirectUriProblem('https://app.example.com/cb#x')).toMatch(/fragment/);
  });
});

describe('isRegisteredRedirectUri', () => {
  const stored = ['HTTPS://App.Example.com:443/cb', 'https://app.example.com', 'https://App.Example.com/frag#x', 'HTTP://Evil.com/cb', 'not a uri', 'https://new.example.com/cb'];

  it.each([
    ['HTTPS://App.Example.com:443/cb', 'the stored text', true],
    ['https://app.example.com/cb', 'the parsed form of a stored URI', true],
    ['https://app.example.com', 'the stored text', true],
    ['https://app.example.com/', 'the parsed form of a stored URI', true],
    ['HTTP://Evil.com/cb', 'the stored text', true],
    ['https://new.example.com/cb', 'a URI registered in its parsed form', true],
    ['https://app.example.com/cb/x', 'a longer path', false],
    ['https://app.example.com/c', 'a prefix', false],
    ['https://app.example.com:443/cb', 'another spelling of a parsed form', false],
    ['https://APP.example.com/cb', 'another spelling of a parsed form', false],
    ['https://app.example.com/frag#x', 'a parsed form with a fragment', false],
    ['http://evil.com/cb', 'a parsed form that is http off loopback', false],
    ['https://new.example.com/cb/', 'a trailing slash', false],
    ['not%20a%20uri', 'an unparsable stored URI', false],
  ])('%s (%s): %s', (requested, _why, matches) => {
    expect(isRegisteredRedirectUri(stored, requested)).toBe(matches);
  });
});
