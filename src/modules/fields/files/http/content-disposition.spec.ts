import { describe, expect, it } from '@jest/globals';
import { contentDisposition } from './files.controller.js';

describe('contentDisposition', () => {
  it('always says attachment, with an ASCII fallback and the UTF-8 name', () => {
    expect(contentDisposition('report.pdf')).toBe(`attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
    expect(contentDisposition('résumé "final".txt')).toBe(
      `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt`,
    );
    expect(contentDisposition("it's (1).txt")).toBe(`attachment; filename="it's (1).txt"; filename*=UTF-8''it%27s%20%281%29.txt`);
  });

  it('never lets a name break out of the header', () => {
    const header = contentDisposition('a\r\nSet-Cookie: x=1\\.txt');
    expect(header).not.toMatch(/[\r\n]/);
    expect(header.split('"')).toHaveLength(3);
  });
});
