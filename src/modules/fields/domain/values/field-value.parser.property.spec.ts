import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { FieldDef, FieldOptions, FieldType, FileInput, MemberRef, PeriodValue } from './field-value.types.js';
import { MAX_TEXT_LENGTH } from './text.parser.js';
import { parseValue } from './field-value.parser.js';
import { expectRefused } from './refusal.test-support.js';

// Field names are user-chosen, so the refusal must name any of them.
const fieldName = fc.string({ minLength: 1, maxLength: 40 });
const def = (name: string, type: FieldType, options: FieldOptions = {}): FieldDef => ({ name, type, options });

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
const calendarDate = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`);
const timeOfDay = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m, s]) => `${pad(h)}:${pad(m)}:${pad(s)}`);
const dateTime = fc.tuple(calendarDate, timeOfDay).map(([d, t]) => `${d}T${t}`);
const storableString = fc.string({ unit: 'binary', maxLength: 200 }).filter((s) => !s.includes('\u0000'));
const positiveId = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const username = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);
const fileName = fc
  .string({ minLength: 1, maxLength: 255 })
  // Blank names are no names (refused, as empty ones are).
  .filter((s) => s.trim() !== '' && s !== '.' && s !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(s));
/** Anything that is neither null, a string nor a number: refused by every scalar type. */
const structured = fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }));

function roundTrips(type: FieldType, options: FieldOptions, input: fc.Arbitrary<unknown>): void {
  fc.assert(
    fc.property(fieldName, input, (name, value) => {
      const field = def(name, type, options);
      const output = parseValue(field, value);
      expect(parseValue(field, output)).toEqual(output);
    }),
  );
}

function refuses(type: FieldType, options: FieldOptions, input: fc.Arbitrary<unknown>): void {
  fc.assert(
    fc.property(fieldName, input, (name, value) => {
      expectRefused(() => parseValue(def(name, type, options), value), name);
    }),
  );
}

const periodInput = (bound: fc.Arbitrary<string>): fc.Arbitrary<PeriodValue | string> =>
  fc
    .tuple(bound, bound, fc.boolean())
    .map(([a, b, asString]) => {
      const [start, end] = a <= b ? [a, b] : [b, a];
      return asString ? `${start.replace('T', ' ')} -> ${end}` : { start, end };
    });

describe('valid values round-trip: parse(parse(x)) equals parse(x)', () => {
  it('text and content', () => {
    roundTrips('text', {}, storableString);
    roundTrips('content', {}, storableString);
  });

  it('number, from numbers and numeric strings', () => {
    const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
    roundTrips('number', {}, fc.oneof(finite, fc.integer(), finite.map((n) => ` ${String(n)} `)));
    fc.assert(
      fc.property(finite, (n) => {
        expect(parseValue(def('n', 'number'), String(n))).toBe(n === 0 ? 0 : n);
      }),
    );
  });

  it('bool, from any string or boolean', () => {
    roundTrips('bool', {}, fc.oneof(fc.boolean(), fc.string(), fc.constantFrom(0, 1)));
  });

  it('date, with and without time and period', () => {
    roundTrips('date', {}, calendarDate);
    roundTrips('date', { time: true }, fc.oneof(calendarDate, dateTime, dateTime.map((s) => s.replace('T', ' '))));
    roundTrips('date', { period: true }, periodInput(calendarDate));
    roundTrips('date', { period: true, time: true }, periodInput(fc.oneof(calendarDate, dateTime)));
  });

  it('time and likes', () => {
    roundTrips('time', {}, timeOfDay);
    roundTrips('likes', {}, fc.constantFrom(-1, 0, 1, '-1', '0', '1'));
  });

  it('relationships', () => {
    roundTrips('relationships', {}, fc.oneof(positiveId, fc.array(fc.oneof(positiveId, positiveId.map(String)), { maxLength: 20 })));
  });

  // Member references and file inputs are resolved before they are stored, so
  // their output round-trips through the input form it stands for.
  it('members', () => {
    const toInput = (ref: MemberRef): string | number => (ref.kind === 'user_id' ? ref.id : `@${ref.username}`);
    fc.assert(
      fc.property(fc.array(fc.oneof(positiveId, username.map((u) => `@${u}`)), { maxLength: 20 }), (refs) => {
        const field = def('Owners', 'members');
        const output = parseValue(field, refs) as MemberRef[];
        expect(parseValue(field, output.map(toInput))).toEqual(output);
        expect(new Set(output.map((r) => (r.kind === 'user_id' ? r.id : r.username.toLowerCase()))).size).toBe(output.length);
      }),
    );
  });

  it('files', () => {
    const toInput = (file: FileInput): unknown =>
      file.kind === 'url'
        ? file.url
        : file.kind === 'text'
          ? { name: file.name, data: file.content }
          : { name: file.name, data: `data:${file.mimeType};base64,${file.bytes.toString('base64')}` };
    const fileInput = fc.oneof(
      fc.webUrl(),
      fc.record({ name: fileName, data: fc.string().filter((s) => !s.startsWith('data:')) }),
      fc.record({
        name: fileName,
        data: fc
          .tuple(fc.constantFrom('image/png', 'text/plain', 'application/vnd.ms-excel'), fc.uint8Array({ maxLength: 300 }))
          .map(([mime, bytes]) => `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`),
      }),
    );
    fc.assert(
      fc.property(fc.array(fileInput, { maxLength: 5 }), (inputs) => {
        const field = def('Docs', 'files');
        const output = parseValue(field, inputs) as FileInput[];
        expect(parseValue(field, output.map(toInput))).toEqual(output);
      }),
    );
  });
});

describe('invalid values are refused with a message naming the field', () => {
  it('text and content', () => {
    const notString = fc.oneof(fc.double(), fc.boolean(), structured);
    refuses('text', {}, notString);
    refuses('content', {}, notString);
    refuses('text', {}, fc.string({ minLength: MAX_TEXT_LENGTH + 1, maxLength: MAX_TEXT_LENGTH + 5, unit: 'grapheme-ascii' }));
  });

  it('number', () => {
    const nonNumeric = fc.string().filter((s) => s.trim() === '' || Number.isNaN(Number(s)));
    refuses('number', {}, fc.oneof(nonNumeric, fc.boolean(), structured, fc.constantFrom(Number.NaN, Infinity, -Infinity, '0x1f', '1e999')));
  });

  it('bool', () => {
    refuses('bool', {}, fc.oneof(fc.double().filter((n) => n !== 0 && n !== 1), structured));
  });

  it('date', () => {
    refuses('date', {}, fc.oneof(fc.string().filter((s) => !/^\s*\d{4}-\d\d-\d\d\s*$/.test(s)), fc.double(), fc.boolean(), structured));
    // Day 31 in a 30-day month and Feb 30 are never dates.
    refuses('date', {}, fc.tuple(fc.integer({ min: 1, max: 9999 }), fc.constantFrom('02-30', '02-31', '04-31', '06-31', '09-31', '11-31')).map(([y, md]) => `${pad(y, 4)}-${md}`));
    refuses('date', {}, dateTime);
    refuses(
      'date',
      { period: true },
      fc.tuple(calendarDate, calendarDate).filter(([a, b]) => a !== b).map(([a, b]) => (a > b ? { start: a, end: b } : { start: b, end: a })),
    );
    refuses('date', { period: true }, fc.oneof(calendarDate, fc.double(), fc.array(calendarDate)));
  });

  it('time', () => {
    const badHour = fc.tuple(fc.integer({ min: 24, max: 99 }), timeOfDay).map(([h, t]) => `${h}${t.slice(2)}`);
    refuses('time', {}, fc.oneof(badHour, fc.double(), fc.boolean(), structured, fc.string().filter((s) => !/^\s*\d\d:\d\d:\d\d\s*$/.test(s))));
  });

  it('likes', () => {
    refuses('likes', {}, fc.oneof(fc.integer().filter((n) => n < -1 || n > 1), fc.double().filter((n) => !Number.isInteger(n)), fc.boolean(), structured));
  });

  it('members and relationships', () => {
    const notId = fc.oneof(fc.integer({ max: 0 }), fc.double().filter((n) => !Number.isInteger(n)), fc.boolean(), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 2 }));
    refuses('relationships', {}, fc.oneof(notId, fc.array(notId, { minLength: 1, maxLength: 3 })));
    refuses('members', {}, fc.oneof(notId, fc.string().filter((s) => !/^\s*(\d+|@[A-Za-z0-9._-]{1,64})\s*$/.test(s))));
  });

  it('files', () => {
    const badUrl = fc.webUrl().map((u) => u.replace(/^https?/, 'ftp'));
    const badName = fc.tuple(fileName, fileName).map(([a, b]) => ({ name: `${a}/${b}`.slice(-255), data: 'x' }));
    refuses('files', {}, fc.oneof(badUrl, badName, fileName.map((name) => ({ name })), fc.double(), fc.boolean()));
  });

  it('group_type', () => {
    refuses('group_type', {}, fc.jsonValue());
  });
});
