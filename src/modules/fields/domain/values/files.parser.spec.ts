import { describe, expect, it } from '@jest/globals';
import { parseFileId, parseFileInput, parseFiles } from './files.parser.js';
import { expectRefused } from './refusal.test-support.js';

describe('files', () => {
  it('takes http and https URLs, normalised', () => {
    expect(parseFileInput('Docs', 'https://example.com/a b.pdf')).toEqual({
      kind: 'url',
      url: 'https://example.com/a%20b.pdf',
    });
    expect(parseFileInput('Docs', ' HTTP://Example.COM:80/x ')).toEqual({ kind: 'url', url: 'http://example.com/x' });
  });

  it.each([['ftp://example.com/a'], ['file:///etc/passwd'], ['javascript:alert(1)'], ['not a url'], ['https://user:pw@example.com/a'], ['https://example.com/' + 'a'.repeat(3000)]])(
    'refuses the URL %j',
    (value) => {
      expectRefused(() => parseFileInput('Docs', value), 'Docs', /file URL/);
    },
  );

  it('takes {name, data} with plain text content', () => {
    expect(parseFileInput('Docs', { name: 'notes.txt', data: 'hello\nworld' })).toEqual({
      kind: 'text',
      name: 'notes.txt',
      content: 'hello\nworld',
    });
    expect(parseFileInput('Docs', { name: 'empty.txt', data: '' })).toEqual({ kind: 'text', name: 'empty.txt', content: '' });
    // Only the base64 form counts as a data URL.
    expect(parseFileInput('Docs', { name: 'a.txt', data: 'data:text/plain,hi' })).toEqual({
      kind: 'text',
      name: 'a.txt',
      content: 'data:text/plain,hi',
    });
  });

  it('decodes data URLs', () => {
    const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
    const parsed = parseFileInput('Docs', { name: 'b.bin', data: `data:Application/Octet-Stream;base64,${bytes.toString('base64')}` });
    expect(parsed).toEqual({ kind: 'base64', name: 'b.bin', mimeType: 'application/octet-stream', bytes });
    expect(parseFileInput('Docs', { name: 'p.txt', data: 'data:text/plain;charset=utf-8;base64,aGk=' })).toEqual({
      kind: 'base64',
      name: 'p.txt',
      mimeType: 'text/plain',
      bytes: Buffer.from('hi'),
    });
    // Unpadded and line-wrapped base64 as some encoders produce it.
    expect(parseFileInput('Docs', { name: 'x', data: 'data:;base64,aGVs\nbG8' })).toEqual({
      kind: 'base64',
      name: 'x',
      mimeType: 'application/octet-stream',
      bytes: Buffer.from('hello'),
    });
  });

  it.each([['a'], ['a=Gk'], ['aGk==='], ['aG*k'], ['aGk=a'], ['aG=']])('refuses invalid base64 %j', (payload) => {
    expectRefused(() => parseFileInput('Docs', { name: 'f', data: `data:text/plain;base64,${payload}` }), 'Docs', /base64/);
  });

  it('refuses a bad MIME type in the data URL', () => {
    expectRefused(() => parseFileInput('Docs', { name: 'f', data: 'data:not a type;base64,aGk=' }), 'Docs', /MIME type/);
  });

  it('refuses {name} without data', () => {
    expectRefused(() => parseFileInput('Docs', { name: 'a.txt' }), 'Docs', /"data"/);
    expectRefused(() => parseFileInput('Docs', { name: 'a.txt', data: null }), 'Docs', /"data"/);
    expectRefused(() => parseFileInput('Docs', { name: 'a.txt', data: 42 }), 'Docs', /"data"/);
  });

  it.each([[''], ['.'], ['..'], ['a/b'], ['..\\x'], ['a\u0000b'], ['tab\there'], ['x'.repeat(256)], [5], [null]])(
    'refuses the file name %j',
    (name) => {
      expectRefused(() => parseFileInput('Docs', { name, data: 'x' }), 'Docs', /file name/);
    },
  );

  it('refuses unknown keys and other JSON types', () => {
    expectRefused(() => parseFileInput('Docs', { name: 'a', data: 'x', mime: 'text/plain' }), 'Docs', /unknown key mime/);
    expectRefused(() => parseFileInput('Docs', 12), 'Docs', /expected a file URL/);
    expectRefused(() => parseFileInput('Docs', true), 'Docs', /expected a file URL/);
    expectRefused(() => parseFileInput('Docs', ['https://example.com/a']), 'Docs', /expected a file URL/);
  });

  it('sets a list, keeping repeated uploads', () => {
    expect(parseFiles('Docs', ['https://example.com/a', 'https://example.com/a'])).toHaveLength(2);
    expect(parseFiles('Docs', 'https://example.com/a')).toEqual([{ kind: 'url', url: 'https://example.com/a' }]);
    expect(parseFiles('Docs', null)).toBeNull();
  });

  it('parses the file id that pop removes', () => {
    expect(parseFileId('Docs', 4)).toBe(4);
    expect(parseFileId('Docs', '4')).toBe(4);
    expectRefused(() => parseFileId('Docs', 'a.txt'), 'Docs', 'expected a file id');
    expectRefused(() => parseFileId('Docs', 0), 'Docs', 'expected a file id');
  });
});
