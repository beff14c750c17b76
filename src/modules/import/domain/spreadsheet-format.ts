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

/** C0 control bytes that never occur in text: everything below space except tab, LF, FF, CR and DOS's end-of-file. */
const BINARY_BYTES = Array.from({ length: 0x20 }, (_, b) => b).filter((b) => ![0x09, 0x0a, 0x0c, 0x0d, 0x1a].includes(b));

/** One native search per byte value: a JavaScript loop over a 20 MiB upload would hold the event loop. */
function hasBinaryBytes(bytes: Buffer, from: number): boolean {
  return BINARY_BYTES.some((b) => bytes.indexOf(b, from) !== -1);
}

function looksLikeMarkup(bytes: Buffer, from: number): boolean {
  const head = bytes.subarray(from, from + 512).toString('latin1').trimStart();
  return head.startsWith('<');
}

/**
 * Decides from the content, never the name (DESIGN.md §8): a zip (XLSX, ODS),
 * or text taken as CSV. Text is UTF-8 when it decodes as UTF-8, UTF-16 with a
 * byte-order mark, and Windows-1252 otherwise (what spreadsheet programs on
 * Windows write). Legacy XLS, other binaries and XML/HTML are refused with 415.
 */
export function sniffContainer(bytes: Buffer): Container {
  if (bytes.length === 0) throw new UnreadableSpreadsheetError('the file is empty');
  if (startsWith(bytes, ZIP_LOCAL_HEADER)) return { kind: 'zip' };
  if (startsWith(bytes, ZIP_EMPTY_ARCHIVE)) throw new UnsupportedSpreadsheetError('an empty zip archive');
  if (startsWith(bytes, OLE_COMPOUND_FILE)) {
    throw new UnsupportedSpreadsheetError('legacy binary Excel (XLS) and other OLE files are not supported');
  }
  if (startsWith(bytes, [0xff, 0xfe])) return { kind: 'text', encoding: 'utf-16le', bomLength: 2 };
  if (startsWith(bytes, [0xfe, 0xff])) return { kind: 'text', encoding: 'utf-16be', bomLength: 2 };
  const bomLength = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  if (hasBinaryBytes(bytes, bomLength)) throw new UnsupportedSpreadsheetError('binary content that is not a spreadsheet');
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
