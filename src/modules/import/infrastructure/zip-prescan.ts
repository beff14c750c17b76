import { createInflateRaw } from 'node:zlib';
import type { ImportLimits } from '../../../config/app-config.js';
import { SpreadsheetTooLargeError, UnreadableSpreadsheetError } from '../domain/import.errors.js';

/** What the pre-scan learnt about a zip: its entry names and the `mimetype` entry's text. */
export interface ZipListing {
  entryNames: string[];
  mimetype: string | null;
  decompressedBytes: number;
  /**
   * The 32-bit size and offset fields that say 0xFFFFFFFF (their value is in
   * a zip64 extra field), with the value checked for each: what
   * `asSheetJsReads` writes into them.
   */
  zip64Fields: Zip64Field[];
}

/** A 32-bit header field at `at` whose value, `value`, is in the entry's zip64 extra field. */
interface Zip64Field {
  at: number;
  value: number;
}

type ZipLimits = Pick<ImportLimits, 'zipMaxEntries' | 'zipMaxEntryBytes' | 'zipMaxTotalBytes' | 'zipMaxRatio'>;

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const CENTRAL_FIXED = 46;
const LOCAL_FIXED = 30;
/** A 32-bit size or offset whose value is in the zip64 extended information extra field (header id 0x0001). */
const ZIP64_MARK = 0xffffffff;
const ZIP64_EXTRA_ID = 0x0001;
/** Entries smaller than this may compress as well as they like (a tiny styles.xml of zeros is no bomb). */
const RATIO_FLOOR_BYTES = 1024 * 1024;
const MIMETYPE_MAX = 256;
/**
 * An XML attribute whose whole value names an object's prototype machinery:
 * the shape of CVE-2023-30533 (a comment `ref="__proto__"`). No spreadsheet
 * has a reason for one; SheetJS 0.18.5 uses such values as object keys.
 */
const PROTOTYPE_KEY_ATTRIBUTE = /=\s*(["'])(?:__proto__|constructor|prototype)\1/;
const PATTERN_OVERLAP = 32;

function refuseHostile(entry: Entry): UnreadableSpreadsheetError {
  return new UnreadableSpreadsheetError(
    `entry ${JSON.stringify(entry.name.slice(0, 100))} holds an attribute named after an object prototype key (a prototype-pollution attempt)`,
  );
}

/** Scans text that arrives in chunks, keeping a short overlap so a match split between two chunks is still found. */
class PatternWatch {
  private tail = '';

  found(chunk: Buffer): boolean {
    const text = this.tail + chunk.toString('latin1');
    this.tail = text.slice(-PATTERN_OVERLAP);
    return PROTOTYPE_KEY_ATTRIBUTE.test(text);
  }
}

function corrupt(detail: string): UnreadableSpreadsheetError {
  return new UnreadableSpreadsheetError(`the zip archive is corrupt (${detail})`);
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  declaredSize: number;
  dataStart: number;
  zip64Fields: Zip64Field[];
}

/**
 * The 64-bit values of the zip64 extended information field (header id
 * 0x0001) among the extra fields at `start`, or none.
 */
function zip64Values(zip: Buffer, start: number, length: number): number[] {
  const end = start + length;
  if (end > zip.length) throw corrupt('an extra field past the end of the file');
  for (let at = start; at + 4 <= end; ) {
    const size = zip.readUInt16LE(at + 2);
    if (at + 4 + size > end) throw corrupt('an extra field longer than its header says');
    if (zip.readUInt16LE(at) === ZIP64_EXTRA_ID) {
      const values: number[] = [];
      for (let v = at + 4; v + 8 <= at + 4 + size; v += 8) {
        const value = zip.readBigUInt64LE(v);
        if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt('a zip64 size past any file');
        values.push(Number(value));
      }
      return values;
    }
    at += 4 + size;
  }
  return [];
}

/**
 * A header's 32-bit fields (their offsets in the file), with the ones that
 * say 0xFFFFFFFF read from the zip64 values of its extra fields (at
 * `extra`, read only then) in their order (APPNOTE 4.5.3: a field's value
 * is there only when it is so marked). A local header's zip64 field holds
 * both sizes whenever it holds one (same note).
 */
function withZip64(
  zip: Buffer,
  fields: number[],
  extra: { start: number; length: number },
  bothSizes: boolean,
): { values: number[]; zip64Fields: Zip64Field[] } {
  const zip64Fields: Zip64Field[] = [];
  if (fields.every((at) => zip.readUInt32LE(at) !== ZIP64_MARK)) return { values: fields.map((at) => zip.readUInt32LE(at)), zip64Fields };
  const values = zip64Values(zip, extra.start, extra.length);
  let next = 0;
  const resolved = fields.map((at, i) => {
    if (zip.readUInt32LE(at) !== ZIP64_MARK) return zip.readUInt32LE(at);
    const value = values[bothSizes && values.length >= fields.length ? i : next++];
    if (value === undefined) throw corrupt('a size marked as zip64 has no zip64 extra field');
    zip64Fields.push({ at, value });
    return value;
  });
  return { values: resolved, zip64Fields };
}

/**
 * The end-of-central-directory record, found as SheetJS finds it: the last
 * signature in the file. Reading the archive the way the parser will read it
 * matters: a pre-scan that trusted another record than the parser would check
 * a different archive.
 */
function findEndOfCentralDirectory(zip: Buffer): { count: number; start: number } {
  let i = zip.length - 4;
  while (i >= 0 && zip.readUInt32LE(i) !== EOCD_SIGNATURE) i--;
  if (i < 0) throw corrupt('no end of central directory');
  if (i + 22 > zip.length) throw corrupt('truncated end of central directory');
  return { count: zip.readUInt16LE(i + 10), start: zip.readUInt32LE(i + 16) };
}

/**
 * One entry as SheetJS (CFB 1.2) reads it: the central directory gives the
 * local header's offset, and the local header's sizes and name are the ones
 * used. Both copies of the sizes must agree, or the archive is refused. A
 * size or offset marked 0xFFFFFFFF is read from the header's zip64 extra
 * field (zip64 archives: Python's force_zip64, XlsxWriter's use_zip64,
 * streaming writers), and noted for `asSheetJsReads`, SheetJS reading the
 * 32-bit fields only.
 */
function readEntry(zip: Buffer, at: number): { entry: Entry; next: number } {
  if (at + CENTRAL_FIXED > zip.length || zip.readUInt32LE(at) !== CENTRAL_SIGNATURE) throw corrupt('bad central directory');
  const centralName = zip.readUInt16LE(at + 28);
  const centralExtra = zip.readUInt16LE(at + 30);
  const next = at + CENTRAL_FIXED + centralName + centralExtra + zip.readUInt16LE(at + 32);
  // The zip64 field's order: uncompressed size, compressed size, local header offset.
  const central = withZip64(zip, [at + 24, at + 20, at + 42], { start: at + CENTRAL_FIXED + centralName, length: centralExtra }, false);
  const [centralSize, centralCompressed, local] = central.values;
  if (local + LOCAL_FIXED > zip.length || zip.readUInt32LE(local) !== LOCAL_SIGNATURE) throw corrupt('bad local header');
  const flags = zip.readUInt16LE(local + 6);
  const nameLength = zip.readUInt16LE(local + 26);
  const localExtra = zip.readUInt16LE(local + 28);
  const dataStart = local + LOCAL_FIXED + nameLength + localExtra;
  if (dataStart > zip.length) throw corrupt('entry past the end of the file');
  const name = zip.toString('latin1', local + LOCAL_FIXED, local + LOCAL_FIXED + nameLength);
  const method = zip.readUInt16LE(local + 8);
  const entry = { name, method, flags, dataStart, compressedSize: centralCompressed, declaredSize: centralSize, zip64Fields: central.zip64Fields };
  // Bit 3 (sizes in a trailing data descriptor) makes the local sizes zero; such
  // archives are written by streaming zippers and compared on the descriptor by SheetJS.
  if (flags & 0x08) return { entry, next };
  const localSizes = withZip64(zip, [local + 22, local + 18], { start: local + LOCAL_FIXED + nameLength, length: localExtra }, true);
  const [declaredSize, compressedSize] = localSizes.values;
  if (compressedSize !== centralCompressed || declaredSize !== centralSize) {
    throw corrupt('the central directory and a local header disagree on sizes');
  }
  return { entry: { ...entry, zip64Fields: [...central.zip64Fields, ...localSizes.zip64Fields] }, next };
}

/**
 * Inflates a deflated entry from its data start to the end of its deflate
 * stream (what the parser will do), counting bytes and keeping none but the
 * first few; stops as soon as `allowed` is passed. Runs on libuv's pool, so
 * the event loop goes on serving other requests.
 */
function inflatedSize(zip: Buffer, entry: Entry, allowed: number, keep: number): Promise<{ size: number; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const inflate = createInflateRaw();
    const watch = new PatternWatch();
    const head: Buffer[] = [];
    let size = 0;
    let kept = 0;
    inflate.on('data', (chunk: Buffer) => {
      if (watch.found(chunk)) {
        inflate.destroy();
        reject(refuseHostile(entry));
        return;
      }
      size += chunk.length;
      if (kept < keep) {
        head.push(chunk.subarray(0, keep - kept));
        kept += Math.min(chunk.length, keep - kept);
      }
      if (size > allowed) {
        inflate.destroy();
        resolve({ size, head: Buffer.concat(head) });
      }
    });
    inflate.on('end', () => resolve({ size, head: Buffer.concat(head) }));
    inflate.on('error', () => reject(corrupt(`entry ${JSON.stringify(entry.name.slice(0, 100))} does not inflate`)));
    inflate.end(zip.subarray(entry.dataStart));
  });
}

/**
 * Checks an XLSX/ODS zip before any parser sees it (DESIGN.md §8): the entry
 * count, every entry's real decompressed size (inflated and counted, not
 * taken from the headers, which a bomb can fake), the total, and the
 * compression ratio of large entries. Encrypted entries, methods other than
 * stored and deflate, and attributes shaped like a prototype-pollution attack
 * are refused.
 */
export async function prescanZip(zip: Buffer, limits: ZipLimits): Promise<ZipListing> {
  const { count, start } = findEndOfCentralDirectory(zip);
  if (count > limits.zipMaxEntries) {
    throw new SpreadsheetTooLargeError(`The zip archive has ${count} entries, more than ${limits.zipMaxEntries}`, 'IMPORT_ZIP_MAX_ENTRIES');
  }
  const listing: ZipListing = { entryNames: [], mimetype: null, decompressedBytes: 0, zip64Fields: [] };
  let at = start;
  for (let i = 0; i < count; i++) {
    const { entry, next } = readEntry(zip, at);
    at = next;
    listing.entryNames.push(entry.name);
    const { size, head } = await measure(zip, entry, limits, listing.decompressedBytes);
    listing.decompressedBytes += size;
    if (entry.name === 'mimetype') listing.mimetype = head.toString('latin1');
    // Checked: the sizes are within the caps and the offsets within the file, so each fits its 32-bit field.
    listing.zip64Fields.push(...entry.zip64Fields);
  }
  return listing;
}

/**
 * The zip as SheetJS can read it: SheetJS (CFB 1.2) reads only the 32-bit
 * sizes and offsets, and refuses a zip64 entry whose local header says
 * 0xFFFFFFFF ("Bad compressed size"). A copy with the values the pre-scan
 * read from the zip64 extra fields, and checked, written into those fields,
 * so the parser reads the archive that was checked; the zip itself when it
 * has no such field.
 */
export function asSheetJsReads(zip: Buffer, listing: ZipListing): Buffer {
  if (!listing.zip64Fields.length) return zip;
  const copy = Buffer.from(zip);
  for (const { at, value } of listing.zip64Fields) copy.writeUInt32LE(value, at);
  return copy;
}

async function measure(zip: Buffer, entry: Entry, limits: ZipLimits, totalSoFar: number): Promise<{ size: number; head: Buffer }> {
  if (entry.flags & 0x41) throw new UnreadableSpreadsheetError('the file is encrypted');
  const label = JSON.stringify(entry.name.slice(0, 100));
  const ratioCap = Math.max(RATIO_FLOOR_BYTES, entry.compressedSize * limits.zipMaxRatio);
  const allowed = Math.min(limits.zipMaxEntryBytes, limits.zipMaxTotalBytes - totalSoFar, ratioCap);
  if (entry.method === 0) {
    const size = entry.compressedSize;
    if (entry.dataStart + size > zip.length) throw corrupt('entry past the end of the file');
    checkSize(size, allowed, entry, limits, totalSoFar, label);
    if (new PatternWatch().found(zip.subarray(entry.dataStart, entry.dataStart + size))) throw refuseHostile(entry);
    return { size, head: zip.subarray(entry.dataStart, entry.dataStart + Math.min(size, MIMETYPE_MAX)) };
  }
  if (entry.method !== 8) throw new UnreadableSpreadsheetError(`entry ${label} uses an unsupported compression method`);
  if (entry.declaredSize > allowed) checkSize(entry.declaredSize, allowed, entry, limits, totalSoFar, label);
  const result = await inflatedSize(zip, entry, allowed, MIMETYPE_MAX);
  checkSize(result.size, allowed, entry, limits, totalSoFar, label);
  return result;
}

/** Names the cap that `size` passes, if it passes one. */
function checkSize(size: number, allowed: number, entry: Entry, limits: ZipLimits, totalSoFar: number, label: string): void {
  if (size <= allowed) return;
  if (size > limits.zipMaxEntryBytes) {
    throw new SpreadsheetTooLargeError(
      `Entry ${label} decompresses to more than ${limits.zipMaxEntryBytes} bytes`,
      'IMPORT_ZIP_MAX_ENTRY_BYTES',
    );
  }
  if (totalSoFar + size > limits.zipMaxTotalBytes) {
    throw new SpreadsheetTooLargeError(
      `The zip archive decompresses to more than ${limits.zipMaxTotalBytes} bytes`,
      'IMPORT_ZIP_MAX_TOTAL_BYTES',
    );
  }
  throw new SpreadsheetTooLargeError(
    `Entry ${label} decompresses more than ${limits.zipMaxRatio} times its compressed size (a zip bomb?)`,
    'IMPORT_ZIP_MAX_RATIO',
  );
}
