import { describe, expect, it } from '@jest/globals';
import { idFrom, requireId } from '../domain/ids.js';
import { formId } from './form-values.js';
import { ParseIdPipe } from './parse-id.pipe.js';

describe('an id as text: one grammar in a path and in a body (DESIGN.md §2)', () => {
  const texts = ['1', '42', '1234567890123456', '9007199254740991', '0', '00', '01', '007', '-1', '+1', ' 1', '1 ', '1.0', '1e3', '0x10', '', 'abc', '9007199254740992', '99999999999999999'];
  const path = (text: string): number | undefined => {
    try {
      return new ParseIdPipe().transform(text);
    } catch {
      return undefined;
    }
  };
  const body = (text: string): number | undefined => {
    try {
      return requireId(text, 'model_id');
    } catch {
      return undefined;
    }
  };
  // A form field's id for `@IsInt()`: a number, or the text as sent.
  const form = (text: string): number | undefined => {
    const read = formId({ value: text });
    return typeof read === 'number' ? read : undefined;
  };

  it('takes the same texts in a path (ParseIdPipe), a body (idFrom, requireId) and a form field (formId)', () => {
    for (const text of texts) {
      const read = { text, path: path(text), idFrom: idFrom(text), requireId: body(text), form: form(text) };
      expect(read).toEqual({ text, path: read.path, idFrom: read.path, requireId: read.path, form: read.path });
    }
    expect(texts.filter((text) => path(text) !== undefined)).toEqual(['1', '42', '1234567890123456', '9007199254740991']);
  });

  it("requireId's refusal names the property", () => {
    expect(() => requireId('007', 'project_id')).toThrow('project_id must be a positive integer id');
    expect(requireId(7, 'project_id')).toBe(7);
  });
});
