import { deflateRawSync } from 'node:zlib';
import XLSX from 'xlsx';

/**
 * Spreadsheets the importer suites make themselves: real XLSX, ODS and CSV
 * files written by SheetJS, and hostile files built entry by entry.
 */
export type Cell = string | number | boolean | Date | null;
export type SheetFormat = 'xlsx' | 'ods' | 'csv';

/**
 * A workbook of one sheet per `rows` argument after the first (or just
 * `rows`). `sharedStrings` writes texts as Excel does, into a shared-strings
 * part; SheetJS writes them inline by default.
 */
export function sheetFile(rows: Cell[][], format: SheetFormat, options: { sharedStrings?: boolean; more?: Cell[][][] } = {}): Buffer {
  const book = XLSX.utils.book_new();
  [rows, ...(options.more ?? [])].forEach((sheet, i) => {
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(sheet, { cellDates: true }), `Sheet${i + 1}`);
  });
  return XLSX.write(book, { type: 'buffer', bookType: format, compression: true, bookSST: options.sharedStrings }) as Buffer;
}

export interface ZipEntry {
  name: string;
  data: Buffer;
  /** 0 stored, 8 deflated (default). */
  method?: 0 | 8;
  /** Size written in the headers; the real size when not given (a bomb may lie). */
  declaredSize?: number;
}

/** The entries of a zip SheetJS wrote, by name. */
export function zipEntries(zip: Buffer): ZipEntry[] {
  const cfb = XLSX.CFB.read(zip, { type: 'buffer' });
  const entries: ZipEntry[] = [];
  cfb.FileIndex.forEach((file: { type: number; content: unknown }, i: number) => {
    const name = cfb.FullPaths[i].replace(/^Root Entry\//, '');
    if (file.type !== 2 || !name || name.startsWith('\u0001')) return;
    entries.push({ name, data: Buffer.from(file.content as Uint8Array) });
  });
  return entries;
}

/** A zip64 extended information extra field (header id 0x0001) holding `values` (8 bytes each). */
function zip64Extra(values: number[]): Buffer {
  const extra = Buffer.alloc(4 + 8 * values.length);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(8 * values.length, 2);
  values.forEach((value, i) => extra.writeBigUInt64LE(BigInt(value), 4 + 8 * i));
  return extra;
}

/**
 * A plain zip writer (no CRC check is made by the readers under test; CRCs
 * are written as zero). `zip64`: the sizes in zip64 extra fields, their
 * 32-bit fields 0xFFFFFFFF, in the local headers (as Python's
 * `force_zip64` writes them) or in the central directory too, with the
 * local header offsets.
 */
export function writeZip(entries: ZipEntry[], options: { zip64?: 'local' | 'everywhere' } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const method = entry.method ?? 8;
    const body = method === 8 ? deflateRawSync(entry.data) : entry.data;
    const size = entry.declaredSize ?? entry.data.length;
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(Math.min(size, 0xffffffff), 22);
    local.writeUInt16LE(name.length, 26);
    const localExtra = options.zip64 ? zip64Extra([size, body.length]) : Buffer.alloc(0);
    if (options.zip64) {
      local.writeUInt16LE(45, 4);
      local.writeUInt32LE(0xffffffff, 18);
      local.writeUInt32LE(0xffffffff, 22);
      local.writeUInt16LE(localExtra.length, 28);
    }
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(Math.min(size, 0xffffffff), 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    const centralExtra = options.zip64 === 'everywhere' ? zip64Extra([size, body.length, offset]) : Buffer.alloc(0);
    if (options.zip64 === 'everywhere') {
      for (const at of [20, 24, 42]) central.writeUInt32LE(0xffffffff, at);
      central.writeUInt16LE(centralExtra.length, 30);
    }
    locals.push(local, name, localExtra, body);
    centrals.push(central, name, centralExtra);
    offset += local.length + name.length + localExtra.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The XLSX `file` with the XML of its first worksheet (as SheetJS names it) edited. */
export function withSheetXml(file: Buffer, edit: (xml: string) => string, name = 'xl/worksheets/sheet1.xml'): Buffer {
  const entries = zipEntries(file);
  const found = entries.find((e) => e.name === name);
  if (!found) throw new Error(`no entry ${name}`);
  found.data = Buffer.from(edit(found.data.toString('utf8')));
  return writeZip(entries);
}

function replaceEntry(zip: Buffer, name: string, data: Buffer): Buffer {
  const entries = zipEntries(zip);
  const found = entries.find((e) => e.name === name);
  if (!found) throw new Error(`no entry ${name}`);
  found.data = data;
  return writeZip(entries);
}

/**
 * CVE-2023-30533's shape: a cell comment whose `ref` is `__proto__`. SheetJS
 * 0.18.5 (sparse sheets) then writes `Object.prototype.c`.
 */
export function prototypePollutionXlsx(): Buffer {
  const sheet = XLSX.utils.aoa_to_sheet([['Title'], ['a card']]);
  sheet.A1.c = [{ a: 'someone', t: 'a comment' }];
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, sheet, 'Sheet1');
  const zip = XLSX.write(book, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
  const comments = zipEntries(zip).find((e) => /^xl\/comments\d*\.xml$/.test(e.name));
  if (!comments) throw new Error('SheetJS wrote no comments part');
  return replaceEntry(zip, comments.name, Buffer.from(comments.data.toString('utf8').replace(/ref="A1"/, 'ref="__proto__"')));
}

/**
 * CVE-2024-22363's shape: styles.xml full of unterminated XML comments, which
 * SheetJS 0.18.5 strips with `/<!--([\s\S]*?)-->/`: quadratic, minutes of CPU
 * from a file of a few kilobytes.
 */
export function commentRegexBombXlsx(openings = 200_000): Buffer {
  const zip = sheetFile([['Title'], ['a card']], 'xlsx');
  const styles = `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${'<!--'.repeat(openings)}</styleSheet>`;
  return replaceEntry(zip, 'xl/styles.xml', Buffer.from(styles));
}

/** An XLSX whose worksheet inflates to `bytes` of spaces (deflate reaches about 1000:1). */
export function zipBombXlsx(bytes = 64 * 1024 * 1024, declaredSize?: number): Buffer {
  const zip = sheetFile([['Title'], ['a card']], 'xlsx');
  const entries = zipEntries(zip).map((e) =>
    e.name === 'xl/worksheets/sheet1.xml' ? { ...e, data: Buffer.alloc(bytes, 0x20), declaredSize } : e,
  );
  return writeZip(entries);
}

/** A CSV whose second row holds one quoted field of `chars` characters. */
export function giantFieldCsv(chars: number): Buffer {
  return Buffer.from(`Title,Notes\nfirst,"${'x'.repeat(chars)}"\n`);
}
