import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
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
    expect(problemOf(body({ disposition: "form-data; name=\"value\"; filename*=UTF-8''; size=1", content: 'x' }))).toMatch(/empty file name/);
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

  /** What busboy (with multer's options) makes of a part named "value", and the problem found for it. */
  type Row = [disposition: string, busboy: string, problem: RegExp | undefined, type?: string];
  const rows: Row[] = [
    // The first of a parameter wins, an empty `filename*` or `filename` gives way to the other.
    ['form-data; name="value"; filename="a.txt"; filename=""', 'file a.txt', undefined],
    ["form-data; name=\"value\"; filename=\"ok.txt\"; filename*=UTF-8''; size=2", 'file ok.txt', undefined],
    ["form-data; name=\"value\"; filename*=UTF-8''; filename=\"ok.txt\"", 'file ok.txt', undefined],
    ["form-data; name=\"value\"; filename*=UTF-8''a.txt; filename=\"b.txt\"", 'file a.txt', undefined],
    ["form-data; name=\"value\"; filename*=UTF-8''%E2%82%AC.txt", 'file \u20ac.txt', undefined],
    ['form-data; name="value"; name="other"; filename=""', 'text value', /empty file name/],
    ['form-data; name="other"; name="value"; filename=""', 'text other', undefined],
    ['form-data; NAME="value"; FILENAME="a.txt"', 'file a.txt', undefined],
    ['form-data; name=value; filename=a.txt', 'file a.txt', undefined],
    // A backslash escapes only a backslash or a quote; before anything else it stays, and busboy's last segment is after it.
    ['form-data; name="value"; filename="x\\.."', 'dropped', /"x\\\\\.\." is not a file name/],
    ['form-data; name="value"; filename="a\\"b.txt"', 'file a"b.txt', undefined],
    ['form-data; name="value"; filename="dir\\\\a.txt"', 'file a.txt', undefined],
    // A folded header is unfolded.
    ['form-data; name="value";\r\n filename=""', 'text value', /empty file name/],
    ['form-data; name="value";\r\n\tfilename="a.txt"', 'file a.txt', undefined],
    // A part typed as a file without a file name is dropped.
    ['form-data; name="value"', 'dropped', /no file name/, 'application/octet-stream'],
    ['form-data; name="value"; filename=""', 'dropped', /empty file name/, 'application/octet-stream'],
    ["form-data; name=\"value\"; filename*=UTF-8''..", 'dropped', /"\.\." is not a file name/],
    // A disposition busboy cannot read (an empty `filename*` last, an unknown charset, not form-data): the part is skipped.
    ["form-data; name=\"value\"; filename=\"ok.txt\"; filename*=UTF-8''", 'skipped', /cannot be read/],
    ["form-data; name=\"value\"; filename*=iso-8859-2''a.txt", 'skipped', /cannot be read/],
    ['attachment; name="value"; filename="a.txt"', 'skipped', /cannot be read/],
    ['form-data; name="value"; filename="a.txt";', 'skipped', /cannot be read/],
    ['form-data; name="other"; filename="a.txt";', 'skipped', undefined],
    // Names that name no file: refused even where busboy keeps them.
    ['form-data; name="value"; filename="  "', 'file   ', /empty file name/],
    ['form-data; name="value"; filename="%0A"', 'file \n', /empty file name/],
    ['form-data; name="value"; filename="dir/ .. "', 'file  .. ', /is not a file name/],
  ];

  it.each(rows)('reads %j as busboy does (%s)', async (...[disposition, read, problem, type]: Row) => {
    const raw = body({ disposition, type: type ?? 'text/plain', content: 'x' });
    expect(await busboyReads(raw)).toBe(read);
    if (problem) expect(problemOf(raw)).toMatch(problem);
    else expect(problemOf(raw)).toBeUndefined();
    // Whatever busboy stores as a file with a name in it passes; what it drops, skips or reads as text beside a file name does not.
    if (/^file .*\S/.test(read) && !/^file [ .]*$/.test(read)) expect(problem).toBeUndefined();
    if (read === 'dropped' || (read === 'skipped' && disposition.includes('"value"'))) expect(problem).toBeDefined();
  });

  it('reads a delimiter followed by anything but a line break or "--" as content, as busboy does', async () => {
    const fake = `\r\n--${BOUNDARY}X\r\nContent-Disposition: form-data; name="value"; filename=""\r\n\r\n`;
    const raw = body({ disposition: 'form-data; name="value"; filename="a.txt"', type: 'text/plain', content: `x${fake}y` });
    expect(await busboyReads(raw)).toBe('file a.txt');
    expect(problemOf(raw)).toBeUndefined();
  });

  it('lists the other parts busboy takes for files, with a file name or without (typed application/octet-stream)', () => {
    const raw = body(
      { disposition: 'form-data; name="value"; filename="a.txt"', content: 'x' },
      { disposition: 'form-data; name="note"', content: 'text' },
      { disposition: 'form-data; name="note2"; filename=""', content: 'text' },
      { disposition: 'form-data; name="other"; filename="b.txt"', content: 'x' },
      { disposition: 'form-data; name="raw"', type: 'application/octet-stream', content: 'x' },
    );
    for (let cut = 1; cut < raw.length; cut += 7) {
      const names = new MultipartFileNames(BOUNDARY, 'value');
      names.write(raw.subarray(0, cut));
      names.write(raw.subarray(cut));
      expect(names.filesNotTaken).toEqual(['other', 'raw']);
      expect(names.problem).toBeUndefined();
    }
  });

  it('reads the boundary of a Content-Type, quoted or not', () => {
    expect(MultipartFileNames.boundaryOf('multipart/form-data; boundary=abc')).toBe('abc');
    expect(MultipartFileNames.boundaryOf('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(MultipartFileNames.boundaryOf('application/json')).toBeUndefined();
  });
});

interface Busboy {
  on(event: 'file', listener: (name: string, stream: Readable, info: { filename?: string }) => void): Busboy;
  on(event: 'field', listener: (name: string) => void): Busboy;
  on(event: 'close' | 'error', listener: () => void): Busboy;
  end(chunk: Buffer): void;
}
const busboy = createRequire(import.meta.url)('busboy') as (config: object) => Busboy;

/** What busboy 1.6, as multer 2 runs it, makes of the part "value": 'file <name>' (stored), 'dropped' (a file multer drops for its empty name), 'text <name>', or 'skipped'. */
function busboyReads(raw: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, defParamCharset: 'utf8' });
    let read = 'skipped';
    parser.on('file', (name, stream, info) => {
      stream.resume();
      if (name === 'value') read = info.filename ? `file ${decodeURIComponent(info.filename.replace(/%(?!0A|0D|22)/gi, '%25'))}` : 'dropped';
    });
    parser.on('field', (name) => (read = `text ${name}`));
    parser.on('error', () => reject(new Error('busboy refused the body')));
    parser.on('close', () => resolve(read));
    parser.end(raw);
  });
}
