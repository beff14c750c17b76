import { describe, expect, it } from '@jest/globals';
import { UnreadableSpreadsheetError, UnsupportedSpreadsheetError } from './import.errors.js';
import { classifyZip, ODS_MIMETYPE, sniffContainer } from './spreadsheet-format.js';

describe('sniffContainer', () => {
  it('tells zips from text, by content only', () => {
    expect(sniffContainer(Buffer.from('PK\x03\x04rest', 'latin1'))).toEqual({ kind: 'zip' });
    expect(sniffContainer(Buffer.from('a,b\n1,2\n'))).toEqual({ kind: 'text', encoding: 'utf-8', bomLength: 0 });
    expect(sniffContainer(Buffer.from('\ufeffa;b\n'))).toEqual({ kind: 'text', encoding: 'utf-8', bomLength: 3 });
    expect(sniffContainer(Buffer.from('Caf\xe9\n', 'latin1'))).toMatchObject({ encoding: 'windows-1252' });
    expect(sniffContainer(Buffer.from([0xff, 0xfe, 0x61, 0x00]))).toMatchObject({ encoding: 'utf-16le', bomLength: 2 });
  });

  it('refuses what is no spreadsheet it reads', () => {
    expect(() => sniffContainer(Buffer.alloc(0))).toThrow(UnreadableSpreadsheetError);
    const random = Buffer.from(Array.from({ length: 1024 }, (_, i) => 1 + ((i * 7919) % 255)));
    for (const bytes of [
      Buffer.from('d0cf11e0a1b11ae10000', 'hex'),
      Buffer.from('PK\x05\x06', 'latin1'),
      Buffer.from('89504e470d0a1a0a0000', 'hex'),
      Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'),
      Buffer.from('1f8b0808', 'hex'),
      Buffer.concat([Buffer.from('Title\n'), Buffer.alloc(1), Buffer.from('\n')]),
      random,
      Buffer.from('  <?xml version="1.0"?><Workbook/>'),
      Buffer.from('<!DOCTYPE html><p>x</p>'),
      Buffer.from('<!-- exported --><html>'),
      Buffer.from('\ufeff<HTML lang="en">'),
      Buffer.from('<table border="1"><tr><td>x</td></tr></table>'),
      Buffer.from('<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet">'),
      Buffer.from('<ss:Workbook>'),
      Buffer.from('<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">'),
    ]) {
      expect(() => sniffContainer(bytes)).toThrow(UnsupportedSpreadsheetError);
    }
  });

  it('refuses UTF-32 by its byte-order mark, naming it (UTF-32LE starts as UTF-16LE does)', () => {
    const le = Buffer.from('fffe000054000000', 'hex');
    const be = Buffer.from('0000feff00000054', 'hex');
    for (const bytes of [le, be]) {
      expect(() => sniffContainer(bytes)).toThrow(UnsupportedSpreadsheetError);
      expect(() => sniffContainer(bytes)).toThrow(/UTF-32/);
    }
    expect(sniffContainer(Buffer.from([0xff, 0xfe, 0x54, 0x00, 0x00, 0x00]))).toMatchObject({ encoding: 'utf-16le' });
  });

  it('reads text with a few stray control bytes, or a tag in its first cell, as CSV', () => {
    const csv = { kind: 'text', encoding: 'utf-8', bomLength: 0 };
    for (const text of [
      'Title,Note\nA,line\x0bbreak\n',
      'Title\x1b[1m,Note\n',
      'Title\x01\x02\x03\x04\x05\x06\x07\x08\n',
      `Title\n${'x'.repeat(1100)}\x00\n`,
      '<b>Title</b>,x\n',
      '<none>\n',
      '<5,x\n',
      '<tablet,x\n',
    ]) {
      expect([text, sniffContainer(Buffer.from(text))]).toEqual([text, csv]);
    }
  });
});

describe('classifyZip', () => {
  it('knows XLSX by its workbook part and ODS by its mimetype entry', () => {
    expect(classifyZip(['[Content_Types].xml', 'xl/workbook.xml'], null)).toBe('xlsx');
    expect(classifyZip(['mimetype', 'content.xml'], ODS_MIMETYPE)).toBe('ods');
  });

  it('refuses other zips', () => {
    expect(() => classifyZip(['mimetype'], 'application/vnd.oasis.opendocument.text')).toThrow(/OpenDocument file of another kind/);
    expect(() => classifyZip(['[Content_Types].xml', 'xl/workbook.bin'], null)).toThrow(/XLSB/);
    expect(() => classifyZip(['word/document.xml'], null)).toThrow(UnsupportedSpreadsheetError);
  });
});
