import { describe, expect, it } from '@jest/globals';
import { MultipartFileNames } from './multipart-file-names.js';

const BOUNDARY = 'XyZ-boundary';

function body(...parts: Array<{ disposition: string; type?: string; content: string }>): Buffer {
  const text = parts
    .map((p) => `--${BOUNDARY}\r\nContent-Disposition: ${p.disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n${p.content}\r\n`)
    .join('');
  return Buffer.from(`${text}--${BOUNDARY}--\r\n`, 'latin1');
}

/** The problem found for the part "value", with the body fed whole and in every split into two chunks. */
function problemOf(raw: Buffer): string | undefined {
  const whole = new MultipartFileNames(BOUNDARY, 'value');
  whole.write(raw);
  for (let cut = 1; cut < raw.length; cut++) {
    const split = new MultipartFileNames(BOUNDARY, 'value');
    split.write(raw.subarray(0, cut));
    split.write(raw.subarray(cut));
    expect(split.problem).toBe(whole.problem);
  }
  return whole.problem;
}

describe('MultipartFileNames', () => {
  it('finds nothing wrong with a file name, a text part or another part', () => {
    expect(problemOf(body({ disposition: 'form-data; name="value"; filename="a.txt"', type: 'text/plain', content: 'x' }))).toBeUndefined();
    expect(problemOf(body({ disposition: 'form-data; name="value"', content: 'https://example.com/a' }))).toBeUndefined();
    expect(problemOf(body({ disposition: 'form-data; name="other"; filename=""', content: 'x' }))).toBeUndefined();
    expect(problemOf(body({ disposition: 'form-data; name="value"; filename="C:\\\\dir\\\\a.txt"', content: 'x' }))).toBeUndefined();
  });

  it('names an empty or blank file name, and one that is no file name', () => {
    expect(problemOf(body({ disposition: 'form-data; name="value"; filename=""', type: 'text/plain', content: 'x' }))).toMatch(/empty file name/);
    expect(problemOf(body({ disposition: 'form-data; name="value"; filename="  "', content: 'x' }))).toMatch(/empty file name/);
    expect(problemOf(body({ disposition: "form-data; name=\"value\"; filename*=UTF-8''", content: 'x' }))).toMatch(/empty file name/);
    for (const name of ['..', '.', 'dir/', 'a/..', '..\\\\']) {
      expect(problemOf(body({ disposition: `form-data; name="value"; filename="${name}"`, content: 'x' }))).toMatch(/is not a file name/);
    }
  });

  it('reads the part after others, content that looks like headers, and an empty part', () => {
    const raw = body(
      { disposition: 'form-data; name="note"', content: 'Content-Disposition: form-data; name="value"; filename=""' },
      { disposition: 'form-data; name="empty"', content: '' },
      { disposition: 'form-data; name="value"; filename=".."', type: 'application/octet-stream', content: '\r\n--not-the-boundary' },
    );
    expect(problemOf(raw)).toMatch(/"\.\." is not a file name/);
  });

  it('reads the boundary of a Content-Type, quoted or not', () => {
    expect(MultipartFileNames.boundaryOf('multipart/form-data; boundary=abc')).toBe('abc');
    expect(MultipartFileNames.boundaryOf('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(MultipartFileNames.boundaryOf('application/json')).toBeUndefined();
  });
});
