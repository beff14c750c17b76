import { isUtf8 } from 'node:buffer';
import { UnreadableSpreadsheetError, UnsupportedSpreadsheetError } from './import.errors.js';

export const SPREADSHEET_FORMATS = ['xlsx', 'csv', 'ods'] as const;
export type SpreadsheetFormat = (typeof SPREADSHEET_FORMATS)[number];

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** What the first bytes say; a zip is told apart (XLSX or ODS) once its entries are listed. */
export type Container = { kind: 'zip' } | { kind: 'text'; encoding: TextEncoding; bomLength: number };

const ZIP_LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];
const ZIP_EMPTY_ARCHIVE = [0x50, 0x4b, 0x05, 0x06];
const OLE_COMPOUND_FILE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function startsWith(bytes: Buffer, magic: number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/** Signatures of binary files whose first bytes may all look like text (a PDF's header, say); each would read as garbage rows. */
const BINARY_SIGNATURES: Array<{ magic: number[]; what: string }> = [
  { magic: [0x25, 0x50, 0x44, 0x46, 0x2d], what: 'a PDF document' }, // %PDF-
  { magic: [0x1f, 0x8b], what: 'a gzip archive' },
  { magic: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], what: 'a 7-Zip archive' },
  { magic: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07], what: 'a RAR archive' }, // Rar!
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: 'an xz archive' },
];

/**
 * How far binary content is looked for. A binary file shows itself in its
 * first bytes (PNG, JPEG, executables: a NUL within a few; compressed data:
 * control bytes everywhere). A text file may still hold a stray control byte
 * further on, or a NUL: it is read as CSV, and a cell no text can hold is a
 * row problem of the import (row-checker.ts), as in an XLSX.
 */
const SNIFF_BYTES = 1024;
/**
 * C0 control bytes that text hardly holds: all but tab, LF, vertical tab
 * (FileMaker's and classic Mac exports' line break inside a cell), form
 * feed, CR, DOS's end-of-file and escape. More of them than this in the
 * first KiB is binary (random bytes hold about a hundred); fewer, and the
 * file is text with a few stray bytes, read as CSV.
 */
const STRAY_CONTROL_BYTES_MAX = 8;
const STRAY_CONTROL_BYTES = Array.from({ length: 0x20 }, (_, b) => b).filter((b) => ![0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1a, 0x1b].includes(b));

function looksBinary(bytes: Buffer, from: number): boolean {
  const head = bytes.subarray(from, from + SNIFF_BYTES);
  if (head.includes(0x00)) return true;
  let stray = 0;
  for (const b of STRAY_CONTROL_BYTES) for (let at = head.indexOf(b); at !== -1; at = head.indexOf(b, at + 1)) stray++;
  return stray > STRAY_CONTROL_BYTES_MAX;
}

/**
 * An XML or HTML document: an XML declaration or processing instruction, a
 * doctype or comment, a root element of HTML (or an HTML table, what web
 * applications send as "Excel"), an Excel 2003 XML `Workbook`, or any first
 * tag declaring a namespace. A CSV whose first cell starts with another tag
 * or a `<` (`<b>Title</b>,x`, `<none>`, `<5`) is not one.
 */
const MARKUP = /^<(?:[?!]|(?:html|head|body|table|(?:[\w.-]+:)?workbook)[\s/>]|[\w.:-]+\s[^>]*\bxmlns\b)/i;

function looksLikeMarkup(bytes: Buffer, from: number): boolean {
  const head = bytes.subarray(from, from + 512).toString('latin1').trimStart();
  return MARKUP.test(head);
}

/**
 * Decides from the content, never the name (DESIGN.md §8): a zip (XLSX, ODS),
 * or text taken as CSV. Text is UTF-8 when it decodes as UTF-8, UTF-16 with a
 * byte-order mark, and Windows-1252 otherwise (what spreadsheet programs on
 * Windows write). UTF-32 (by its byte-order mark), legacy XLS, other
 * binaries and XML/HTML documents are refused with 415.
 */
export function sniffContainer(bytes: Buffer): Container {
  if (bytes.length === 0) throw new UnreadableSpreadsheetError('the file is empty');
  if (startsWith(bytes, ZIP_LOCAL_HEADER)) return { kind: 'zip' };
  if (startsWith(bytes, ZIP_EMPTY_ARCHIVE)) throw new UnsupportedSpreadsheetError('an empty zip archive');
  if (startsWith(bytes, OLE_COMPOUND_FILE)) {
    throw new UnsupportedSpreadsheetError('legacy binary Excel (XLS) and other OLE files are not supported');
  }
  // UTF-32's marks first: UTF-32LE's begins with UTF-16LE's (FF FE), and
  // read as UTF-16 its text is every other character a NUL or garbage.
  if (startsWith(bytes, [0xff, 0xfe, 0x00, 0x00]) || startsWith(bytes, [0x00, 0x00, 0xfe, 0xff])) {
    throw new UnsupportedSpreadsheetError('UTF-32 text; save the CSV as UTF-8 or UTF-16');
  }
  if (startsWith(bytes, [0xff, 0xfe])) return { kind: 'text', encoding: 'utf-16le', bomLength: 2 };
  if (startsWith(bytes, [0xfe, 0xff])) return { kind: 'text', encoding: 'utf-16be', bomLength: 2 };
  const signature = BINARY_SIGNATURES.find((s) => startsWith(bytes, s.magic));
  if (signature) throw new UnsupportedSpreadsheetError(`${signature.what}, not a spreadsheet`);
  const bomLength = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  if (looksBinary(bytes, bomLength)) throw new UnsupportedSpreadsheetError('binary content that is not a spreadsheet');
  if (looksLikeMarkup(bytes, bomLength)) throw new UnsupportedSpreadsheetError('XML or HTML content');
  return { kind: 'text', encoding: isUtf8(bytes.subarray(bomLength)) ? 'utf-8' : 'windows-1252', bomLength };
}

/** The OpenDocument spreadsheet media type, stored uncompressed as the `mimetype` entry. */
export const ODS_MIMETYPE = 'application/vnd.oasis.opendocument.spreadsheet';

/** XLSX or ODS from the zip's entry names and its `mimetype` entry (null when it has none). */
export function classifyZip(entryNames: string[], mimetype: string | null): SpreadsheetFormat {
  if (mimetype !== null && mimetype.trim() === ODS_MIMETYPE) return 'ods';
  const names = new Set(entryNames);
  if (names.has('[Content_Types].xml') && names.has('xl/workbook.xml')) return 'xlsx';
  if (mimetype !== null) throw new UnsupportedSpreadsheetError(`an OpenDocument file of another kind (${mimetype.trim().slice(0, 80)})`);
  if (names.has('xl/workbook.bin')) throw new UnsupportedSpreadsheetError('binary Excel workbooks (XLSB) are not supported');
  throw new UnsupportedSpreadsheetError('a zip archive that is neither an XLSX nor an ODS spreadsheet');
}
