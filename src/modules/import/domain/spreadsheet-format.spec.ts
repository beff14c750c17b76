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
    for (const bytes of [
      Buffer.from('d0cf11e0a1b11ae10000', 'hex'),
      Buffer.from('PK\x05\x06', 'latin1'),
      Buffer.from('89504e470d0a1a0a0000', 'hex'),
      Buffer.from('  <?xml version="1.0"?><Workbook/>'),
    ]) {
      expect(() => sniffContainer(bytes)).toThrow(UnsupportedSpreadsheetError);
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
