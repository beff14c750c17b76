import type { MessagePort } from 'node:worker_threads';

/** What the sandbox hands its worker. */
export interface SheetWorkerInput {
  bytes: Uint8Array;
  /** Resolved path of the parser module (SheetJS, or a test's stand-in). */
  parserPath: string;
  maxRows: number;
  maxColumns: number;
  batchRows: number;
  /** Worksheet XML bytes given to SheetJS at a time; a larger worksheet is parsed in windows of rows. */
  windowBytes: number;
}

/** What the worker posts back: plain arrays of strings, never parser objects. */
export type SheetWorkerMessage =
  | { type: 'rows'; rows: string[][] }
  | { type: 'done' }
  | { type: 'too_many'; what: 'rows' | 'columns'; count: number }
  | { type: 'failed'; message: string }
  /** The file is malformed in a way SheetJS passes over without a word (`message` says where). */
  | { type: 'unreadable'; message: string };

type Cell = { t?: string; v?: unknown; w?: string; z?: string | number };
type DateCode = { y: number; m: number; d: number; H: number; M: number; S: number };
type Sheet = Array<Array<Cell | undefined> | undefined> & { '!ref'?: string; '!fullref'?: string };
type Book = { SheetNames: string[]; Sheets: Record<string, Sheet>; Workbook?: { WBProps?: { date1904?: boolean } } };
/** A zip as SheetJS's CFB reads it: entries whose `content` the worker may swap before `parse_zip`. */
type Zip = { FileIndex: Array<{ content?: unknown }>; FullPaths: string[] };
type Parser = {
  CFB: { read(data: Uint8Array, options: { type: 'buffer' }): Zip };
  parse_zip(zip: Zip, options: Record<string, unknown>): Book;
  utils: { decode_range(ref: string): { s: { r: number; c: number }; e: { r: number; c: number } } };
  SSF: { is_date(format: string | number): boolean; parse_date_code(value: number, options?: unknown): DateCode | null };
};

/** A worksheet part cut into windows of whole rows: each window is `head`, `body[cuts[i]..cuts[i+1]]`, then the close. */
export interface SheetWindows {
  head: Buffer;
  /** Closes `sheetData` and the root: ends every window but the last. */
  closing: Buffer;
  /** The part's own end (`</sheetData>` and whatever follows it): ends the last window. */
  tail: Buffer;
  cuts: number[];
}

/**
 * A cell as the text the importer reads: numbers with a date format as
 * calendar dates (ISO, with the time when there is one) or times of day,
 * booleans as true/false, errors as their display text (`#N/A`).
 */
export function sheetCellText(cell: Cell | undefined, parser: Parser, date1904: boolean): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  if (cell?.t === 'e') {
    // SheetJS keeps an error's code in `v`, and its text in `w` only with cellText.
    const errors: Record<number, string> = { 0: '#NULL!', 7: '#DIV/0!', 15: '#VALUE!', 23: '#REF!', 29: '#NAME?', 36: '#NUM!', 42: '#N/A', 43: '#GETTING_DATA' };
    return cell.w ?? (typeof cell.v === 'number' ? (errors[cell.v] ?? '') : '');
  }
  if (!cell || cell.v === undefined || cell.v === null) return '';
  if (cell.t === 'b') return cell.v ? 'true' : 'false';
  if (cell.t === 'n' && typeof cell.v === 'number' && cell.z !== undefined && parser.SSF.is_date(cell.z)) {
    const d = parser.SSF.parse_date_code(cell.v, { date1904 });
    if (d) {
      const time = `${pad(d.H)}:${pad(d.M)}:${pad(d.S)}`;
      // A time of day (`9:30` typed in Excel, an ODS time cell): a format that
      // shows no day (`h:mm`; an elapsed `[h]:mm` only under a day), or a
      // serial within the 1900 system's day 0, which is no calendar day
      // (1900-01-00).
      const shown = String(cell.z).replace(/"[^"]*"|[\\_*].|\[(?![hms]+\])[^\]]*\]/gi, '');
      const timeOnly = !/[dyebg]/i.test(shown) && (cell.v < 1 || !/\[[hms]+\]/i.test(shown));
      if (cell.v >= 0 && (timeOnly || (!date1904 && cell.v < 1))) return time;
      const day = `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`;
      return d.H || d.M || d.S ? `${day}T${time}` : day;
    }
  }
  if (cell.v instanceof Date) {
    const v = cell.v;
    return `${pad(v.getFullYear(), 4)}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
  }
  return String(cell.v);
}

/**
 * The text of an ISO 8601 date cell (`t="d"`, which holds a calendar value
 * rather than a serial number) as date-formatted numbers arrive: the day
 * (`2026-01-05`), with the time when it is not midnight
 * (`2026-01-05T10:30:00`), or a time alone (`10:30:00`). A zone written
 * after it is dropped, as for ODS dates: the cell shows a calendar value.
 * Anything else is left as written, for a typed column to refuse by name.
 */
export function isoCellText(value: string): string {
  const iso = /^\s*(?:(\d{4}-\d\d-\d\d)(?:[Tt ](\d\d):(\d\d)(?::(\d\d))?(?:[.,]\d+)?)?|[Tt]?(\d\d):(\d\d)(?::(\d\d))?(?:[.,]\d+)?)(?:[Zz]|[+-]\d\d(?::?\d\d)?)?\s*$/.exec(value);
  if (!iso) return value;
  const [, day, h, m, s, th, tm, ts] = iso;
  if (!day) return `${th}:${tm}:${ts ?? '00'}`;
  const time = `${h ?? '00'}:${m ?? '00'}:${s ?? '00'}`;
  return time === '00:00:00' ? day : `${day}T${time}`;
}

/**
 * Whether a worksheet part is whole: its root closes at its end and its
 * `sheetData` closes (or is empty). SheetJS reads a part cut short (a
 * truncated file, a part cut mid-row) without a word, as the rows before
 * the cut, or none.
 */
export function sheetPartComplete(part: Buffer): boolean {
  const end = part.subarray(Math.max(0, part.length - 256)).toString('latin1');
  if (!/<\/(?:[\w.-]+:)?worksheet\s*>\s*$/.test(end)) return false;
  const at = part.lastIndexOf('sheetData');
  if (at < 0) return false;
  const around = part.subarray(Math.max(0, at - 40), at + 80).toString('latin1');
  return /<\/(?:[\w.-]+:)?sheetData\s*>|<(?:[\w.-]+:)?sheetData(?:\s[^<>]*)?\/>/.test(around);
}

/** A worksheet's cells: a tag stops at the next `<`, and a cell's content at the next cell's tag (an unclosed one costs a scan to them, not to the end). */
export function cellTags(): RegExp {
  return /<((?:[\w.-]+:)?)c((?:\s[^<>]*?)?)(?:\/>|>((?:[^<]|<(?!\/?(?:[\w.-]+:)?c[\s/>]))*?)<\/\1c>)/g;
}

/**
 * Why SheetJS could not read a worksheet part: the first cell naming a
 * shared string (`t="s"`) that the workbook does not have, given how many
 * its shared-strings part holds (null: it has none). SheetJS 0.18.5 throws
 * on such a cell, catches its own error and leaves the sheet out of the
 * workbook, which read as an empty sheet. Null when no cell is such.
 */
export function danglingSharedString(part: Buffer, strings: number | null): string | null {
  const shared = /\s(?:[\w.-]+:)?[tT]\s*=\s*(["'])s\1/;
  const cells = cellTags();
  const xml = part.toString('latin1');
  for (let m = cells.exec(xml); m; m = cells.exec(xml)) {
    if (!shared.test(m[2])) continue;
    const index = /<(?:[\w.-]+:)?v(?:\s[^<>]*)?>\s*([^<]*?)\s*<\//.exec(m[3] ?? '')?.[1];
    if (index === undefined || (/^\d+$/.test(index) && Number(index) < (strings ?? 0))) continue;
    const ref = /\sr\s*=\s*["']([A-Za-z]{1,3}\d{1,7})["']/.exec(m[2])?.[1];
    const has = strings === null ? 'the workbook has no shared-strings part' : `the workbook's shared-strings part holds ${strings}`;
    return `${ref ? `cell ${ref.toUpperCase()}` : 'a cell'} names shared string ${JSON.stringify(index.slice(0, 20))}, but ${has}`;
  }
  return null;
}

/**
 * A worksheet part (or a window of it) whose ISO date cells (`t="d"`) are
 * text cells of `isoCellText`'s value. SheetJS, told not to make Date
 * objects (cellDates false), turns such a cell into a serial number through
 * the process's time zone (`2026-01-05T00:00:00` is 46027.2, 05:00, in New
 * York and 15:00 the day before in Tokyo), and without a date format it
 * arrived as that number. A `t="d"` cell with no value is left empty (SheetJS made
 * NaN of it). Parts without a `"d"` are returned as they are, uncopied.
 */
export function isoDateCells(part: Buffer): Buffer {
  if (!part.includes('"d"') && !part.includes("'d'")) return part;
  const cell = cellTags();
  // SheetJS reads an attribute of any prefix and any case of its name as `t`.
  const dated = /\s(?:[\w.-]+:)?[tT]\s*=\s*(["'])d\1/;
  const value = /(<(?:[\w.-]+:)?v(?:\s[^<>]*)?>)([^<]*)(<\/(?:[\w.-]+:)?v>)/;
  let changed = false;
  const xml = part.toString('latin1').replace(cell, (whole: string, prefix: string, attributes: string, content: string | undefined) => {
    if (!dated.test(attributes)) return whole;
    changed = true;
    const rest = attributes.replace(dated, '');
    const v = content === undefined ? null : value.exec(content);
    if (!v) return `<${prefix}c${rest}>${content ?? ''}</${prefix}c>`;
    return `<${prefix}c${rest} t="str">${content!.replace(value, (_, open: string, text: string, close: string) => `${open}${isoCellText(text)}${close}`)}</${prefix}c>`;
  });
  return changed ? Buffer.from(xml, 'latin1') : part;
}

/**
 * A styles part that declares Excel's East-Asian built-in number formats
 * (ids 27-36 and 50-58) before its own formats. Excel in a Chinese,
 * Japanese or Korean locale writes dates with them (`yyyy"年"m"月"d"日"`,
 * `ge.m.d`) by id alone, as it writes `m/d/yy` as id 14, and SheetJS 0.18.5
 * knows no code for them: such a cell got no format, and its serial number
 * arrived as written (46027.5). They are dates, or times in some locales:
 * 32 and 33 (`h"時"mm"分"`) are times of day in every one of them, and are
 * declared as `h:mm:ss`; the others as a day (a locale that shows a time
 * there, as Chinese does for 34, 35 and 52-56, gets the day and the time,
 * and a time alone, a serial below 1, stays a time of day). A format the
 * part declares itself for one of these ids comes after, and SheetJS keeps
 * the last one.
 */
export function eastAsianDateFormats(part: Buffer): Buffer {
  const ids = [27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 50, 51, 52, 53, 54, 55, 56, 57, 58];
  const declared = ids.map((id) => `<numFmt numFmtId="${id}" formatCode="${id === 32 || id === 33 ? 'h:mm:ss' : 'yyyy-mm-dd'}"/>`).join('');
  const xml = part.toString('latin1');
  // SheetJS reads the formats of the first numFmts element that is closed (its regex's match): the first start tag, when a close follows it.
  const open = /<(?:\w+:)?numFmts[^>]*>/.exec(xml);
  const closed = open !== null && /<\/(?:\w+:)?numFmts>/.test(xml.slice(open.index + open[0].length));
  const at = closed ? open : /<(?:[\w.-]+:)?styleSheet(?:\s[^<>]*)?>/.exec(xml);
  if (!at || (!closed && at[0].endsWith('/>'))) return part;
  const insert = closed ? declared : `<numFmts>${declared}</numFmts>`;
  const end = at.index + at[0].length;
  return Buffer.from(xml.slice(0, end) + insert + xml.slice(end), 'latin1');
}

/** Whether an XML part's root element is `name` (any namespace prefix), judged from its first bytes. */
export function xmlRootIs(part: Buffer, name: string): boolean {
  const start = part.toString('latin1', 0, Math.min(part.length, 4096)).replace(/^\xEF\xBB\xBF/, '');
  return new RegExp(`^\\s*(?:<\\?xml[^>]*\\?>\\s*)?(?:<!--[\\s\\S]*?-->\\s*)*<(?:[\\w.-]+:)?${name}[\\s/>]`).test(start);
}

/**
 * Where a worksheet part can be cut so that SheetJS reads each window as it
 * would read the whole: only between rows, and only before a row that
 * carries its own number (`r`), since SheetJS numbers a row without one
 * from the row before it. Null when the part is small enough to parse at
 * once or is not laid out as expected (the whole part is parsed then).
 */
export function sheetWindows(part: Buffer, windowBytes: number): SheetWindows | null {
  if (part.length <= windowBytes) return null;
  const open = /<((?:\w+:)?)sheetData\b[^>]*>/.exec(part.toString('latin1', 0, Math.min(part.length, 1 << 20)));
  if (!open || open[0].endsWith('/>')) return null;
  const prefix = open[1];
  const bodyStart = open.index + open[0].length;
  const bodyEnd = part.lastIndexOf(`</${prefix}sheetData>`);
  const root = /<\/(?:\w+:)?worksheet>\s*$/.exec(part.toString('latin1', Math.max(bodyEnd, part.length - 256)));
  if (bodyEnd < bodyStart || !root) return null;
  const rowClose = Buffer.from(`</${prefix}row>`, 'latin1');
  const numberedRow = new RegExp(`^\\s*<${prefix}row(?:\\s[^>]*?)?\\sr=["']`);
  const startsNumberedRow = (at: number) => numberedRow.test(part.toString('latin1', at, Math.min(at + 512, bodyEnd)));
  const cuts = [bodyStart];
  for (let at = bodyStart; bodyEnd - at > windowBytes; ) {
    let end = part.indexOf(rowClose, at + windowBytes);
    while (end !== -1 && end < bodyEnd && !startsNumberedRow(end + rowClose.length)) end = part.indexOf(rowClose, end + rowClose.length);
    if (end === -1 || end + rowClose.length >= bodyEnd) break;
    at = end + rowClose.length;
    cuts.push(at);
  }
  if (cuts.length === 1) return null;
  cuts.push(bodyEnd);
  const closing = Buffer.from(`</${prefix}sheetData>${root[0].trim()}`, 'latin1');
  return { head: part.subarray(0, bodyStart), closing, tail: part.subarray(bodyEnd), cuts };
}

/**
 * The number (1-based) of a worksheet part's last row, as SheetJS numbers
 * rows: a row's `r`, or one more than the row before it. Read from the XML
 * a slice at a time, so a large part is never one string. SheetJS, told to
 * stop after a number of rows (`sheetRows`), skips the rows past it without
 * a word when the part declares no `<dimension>`: this is how the worker
 * tells that the sheet had more.
 */
export function lastRowNumber(part: Buffer): number {
  const slice = 1 << 20;
  // A row's start tag, any namespace prefix; the overlap holds a tag cut by a slice's end.
  const tag = /<(?:[\w.-]+:)?row(?=[\s>/])([^>]*)>?/g;
  const overlap = 4096;
  let last = 0;
  for (let start = 0; start < part.length; start += slice) {
    const text = part.toString('latin1', start, Math.min(part.length, start + slice + overlap));
    tag.lastIndex = 0;
    for (let m = tag.exec(text); m && m.index < slice; m = tag.exec(text)) {
      const r = /\sr\s*=\s*["'](\d+)["']/.exec(m[1]);
      last = r ? Number(r[1]) : last + 1;
    }
  }
  return last;
}

/**
 * One parse as the worker's steps share it: what the sandbox handed over,
 * the loaded parser, the way back to the parent, and how far the first
 * sheet has been posted (a large sheet is parsed in windows, and each
 * window's rows carry on from the last one's).
 */
interface SheetWorkerRun {
  input: SheetWorkerInput;
  parser: Parser;
  post: (message: SheetWorkerMessage) => void;
  /** Rows read and not posted yet: they go back `batchRows` at a time. */
  batch: string[][];
  /** The first sheet's next row (0-based) to post. */
  next: number;
}

/** The first sheet's part cut into windows, when it is larger than a window: see `windowsOfFirstSheet`. */
interface WindowedSheet {
  entry: Zip['FileIndex'][number];
  part: Buffer;
  windows: SheetWindows;
}

/**
 * What SheetJS is told: the first sheet only, as dense rows of values and
 * their number formats (dates are told by them), at most `sheetRows` rows;
 * nothing the importer does not read (formulas, HTML, styles, macros).
 */
function sheetReadOptions(sheetRows: number) {
  return {
    type: 'buffer',
    dense: true,
    sheets: 0,
    sheetRows,
    cellNF: true,
    cellDates: false,
    cellFormula: false,
    cellHTML: false,
    cellText: false,
    cellStyles: false,
    bookVBA: false,
  };
}

/** Whether a zip entry is an XML part of root `root`: the worker finds worksheets, shared strings and styles by content, not by path. */
function isXmlPart(content: unknown, root: string): content is Buffer {
  return Buffer.isBuffer(content) && xmlRootIs(content, root);
}

/**
 * The entry that SheetJS reads as the first sheet, found by asking it:
 * every worksheet part is swapped for a one-cell sheet holding its index
 * (and the shared strings for an empty list, to skip their parse).
 */
function firstSheetEntry(parser: Parser, zip: Zip): number | null {
  const saved = zip.FileIndex.map((entry) => entry.content);
  try {
    zip.FileIndex.forEach((entry, i) => {
      if (isXmlPart(entry.content, 'worksheet')) entry.content = Buffer.from(`<worksheet><sheetData><row r="1"><c r="A1"><v>${i}</v></c></row></sheetData></worksheet>`);
      else if (isXmlPart(entry.content, 'sst')) entry.content = Buffer.from('<sst/>');
    });
    const book = parser.parse_zip(zip, sheetReadOptions(2));
    const index = book.SheetNames.length ? book.Sheets[book.SheetNames[0]]?.[0]?.[0]?.v : undefined;
    return typeof index === 'number' && isXmlPart(saved[index], 'worksheet') ? index : null;
  } finally {
    zip.FileIndex.forEach((entry, i) => (entry.content = saved[i]));
  }
}

/** The first sheet's part and its windows, when it is larger than a window (at least twice the shared strings). */
function windowsOfFirstSheet(zip: Zip, index: number | null, windowBytesAtLeast: number): WindowedSheet | null {
  const shared = zip.FileIndex.reduce((n, entry) => (isXmlPart(entry.content, 'sst') ? n + entry.content.length : n), 0);
  const windowBytes = Math.max(windowBytesAtLeast, 2 * shared);
  const entry = index === null ? undefined : zip.FileIndex[index];
  if (!entry || (entry.content as Buffer).length <= windowBytes) return null;
  const windows = sheetWindows(entry.content as Buffer, windowBytes);
  return windows ? { entry, part: entry.content as Buffer, windows } : null;
}

/** The cap a parsed ODS sheet passes, if any (`!fullref` is its range before `sheetRows` cut it short). */
function capPassed(run: SheetWorkerRun, sheet: Sheet & { '!ref': string }): SheetWorkerMessage | null {
  const full = run.parser.utils.decode_range(sheet['!fullref'] ?? sheet['!ref']);
  if (full.e.r + 1 > run.input.maxRows) return { type: 'too_many', what: 'rows', count: full.e.r + 1 };
  if (full.e.c + 1 > run.input.maxColumns) return { type: 'too_many', what: 'columns', count: full.e.c + 1 };
  return null;
}

/**
 * The last row (0-based) to post from a parsed sheet, or a cap it passes.
 *
 * An XLSX sheet (`rows` counted in its XML, already within the row cap) is
 * as long as its last row element, and as wide as its cells: its declared
 * range (`<dimension>`, SheetJS's `!ref`, and `!fullref` once `sheetRows`
 * cut it) is not trusted for either. Some exporters declare `A1:Z1048576`
 * over a few rows: the range made such a file pass the row cap (413), or,
 * under a higher cap, post a million blank rows; a range wider than the
 * column cap refused cells all within it; and a range shorter than the
 * rows (SheetJS still reads their cells) dropped the rows past it without
 * a word. So a window ends at its last row with cells, and the last window
 * at the sheet's last row element: blank rows between rows, and the rows
 * (with or without cells) written after the last filled one, are posted
 * as blank rows as before, but no row the XML does not hold. A stored
 * cell past the column cap still refuses the sheet, before any of its
 * window is posted (a cell far to the right must not be walked to either).
 * A cell whose reference names a row past its sheet's last row element
 * (malformed) is not posted, as when no range covered it.
 *
 * An ODS sheet (`rows` null: nothing counted, and no declared range to
 * distrust) is posted up to SheetJS's range, as before.
 */
function lastRowToPost(run: SheetWorkerRun, sheet: Sheet, lastWindow: boolean, rows: number | null): number | SheetWorkerMessage {
  if (rows === null) {
    if (!sheet['!ref']) return -1;
    const cap = capPassed(run, sheet as Sheet & { '!ref': string });
    if (cap) return cap;
    const declared = run.parser.utils.decode_range(sheet['!ref']).e.r;
    return lastWindow ? declared : Math.min(declared, sheet.length - 1);
  }
  const last = lastWindow ? rows - 1 : Math.min(rows, sheet.length) - 1;
  for (let r = run.next; r <= last; r++) {
    const width = sheet[r]?.length ?? 0;
    if (width > run.input.maxColumns) return { type: 'too_many', what: 'columns', count: width };
  }
  return last;
}

/** A parsed book's first sheet, or null (posted as unreadable) when it has none to read. */
function firstSheetRead(run: SheetWorkerRun, book: Book, unread: () => string): Sheet | null {
  const sheet = book.SheetNames.length ? book.Sheets[book.SheetNames[0]] : undefined;
  if (!sheet && book.SheetNames.length) {
    // SheetJS left out a sheet it failed to read: the rows are not there to post, and no sheet is not an empty one.
    run.post({ type: 'unreadable', message: unread() });
    return null;
  }
  if (!sheet) {
    // No sheet at all: a workbook has at least one, so this one is broken, not empty.
    run.post({ type: 'unreadable', message: 'the workbook lists no sheet' });
    return null;
  }
  return sheet;
}

/**
 * Posts a sheet's rows from `run.next` to `last` as text, a batch at a
 * time; each row is dropped from the sheet once read, so a window's cells
 * and their text are not held twice.
 */
function postSheetRows(run: SheetWorkerRun, sheet: Sheet, last: number, date1904: boolean): void {
  for (; run.next <= last; run.next++) {
    const cells = sheet[run.next] ?? [];
    const row: string[] = [];
    for (let c = 0; c < cells.length; c++) row.push(sheetCellText(cells[c], run.parser, date1904));
    while (row.length && row[row.length - 1] === '') row.pop();
    sheet[run.next] = undefined;
    run.batch.push(row);
    if (run.batch.length === run.input.batchRows) {
      run.post({ type: 'rows', rows: run.batch });
      run.batch = [];
    }
  }
}

/**
 * Posts a parsed sheet's rows from `run.next` on, up to `lastRowToPost`.
 * False when the sheet passes a cap or could not be read (posted as such).
 */
function postRows(run: SheetWorkerRun, book: Book, lastWindow: boolean, rows: number | null, unread: () => string): boolean {
  const sheet = firstSheetRead(run, book, unread);
  if (!sheet) return false;
  const last = lastRowToPost(run, sheet, lastWindow, rows);
  if (typeof last !== 'number') {
    run.post(last);
    return false;
  }
  postSheetRows(run, sheet, last, Boolean(book.Workbook?.WBProps?.date1904));
  return true;
}

/** What is wrong with the first sheet (its part, or the window of it being read) that SheetJS could not read. */
function whyUnread(zip: Zip, index: number | null): string {
  if (index === null) return 'its first sheet is malformed';
  const sst = zip.FileIndex.find((entry) => isXmlPart(entry.content, 'sst'))?.content as Buffer | undefined;
  const strings = sst ? (sst.toString('latin1').match(/<(?:\w+:)?(?:si|sstItem)>/g) ?? []).length : null;
  const part = (zip.FullPaths[index] ?? '').replace(/^Root Entry\//, '');
  return danglingSharedString(zip.FileIndex[index].content as Buffer, strings) ?? `its first sheet (${JSON.stringify(part.slice(0, 100))}) is malformed`;
}

/**
 * The first sheet's entry (null when there is no XLSX worksheet, as in an
 * ODS) and its rows as counted in its XML, checked before SheetJS parses
 * it: past the cap, a row SheetJS would skip unseen (no <dimension>) makes
 * the sheet too large, and a part cut short would read as the rows before
 * the cut. Null once refused (posted as such).
 */
function prescanFirstSheet(run: SheetWorkerRun, zip: Zip): { index: number | null; rows: number | null } | null {
  const index = zip.FileIndex.some((entry) => isXmlPart(entry.content, 'worksheet')) ? firstSheetEntry(run.parser, zip) : null;
  if (index !== null && !sheetPartComplete(zip.FileIndex[index].content as Buffer)) {
    const part = (zip.FullPaths[index] ?? '').replace(/^Root Entry\//, '');
    run.post({ type: 'unreadable', message: `its first sheet (${JSON.stringify(part.slice(0, 100))}) is cut short: its XML does not close` });
    return null;
  }
  const rows = index === null ? null : lastRowNumber(zip.FileIndex[index].content as Buffer);
  if (rows !== null && rows > run.input.maxRows) {
    run.post({ type: 'too_many', what: 'rows', count: rows });
    return null;
  }
  return { index, rows };
}

/** Parses and posts a large first sheet a window at a time, the rest of the zip as it is; false when a window passes a cap. */
function parseWindows(run: SheetWorkerRun, zip: Zip, plan: WindowedSheet, rows: number | null, unread: () => string): boolean {
  const { entry, part, windows } = plan;
  for (let w = 0; w + 1 < windows.cuts.length; w++) {
    const lastWindow = w + 2 === windows.cuts.length;
    const body = isoDateCells(part.subarray(windows.cuts[w], windows.cuts[w + 1]));
    entry.content = Buffer.concat([windows.head, body, lastWindow ? windows.tail : windows.closing]);
    if (!postRows(run, run.parser.parse_zip(zip, sheetReadOptions(run.input.maxRows + 1)), lastWindow, rows, unread)) return false;
  }
  return true;
}

/** Parses the first sheet, a window at a time when it is large; false when it passes a cap or cannot be read. */
function parseFirstSheet(run: SheetWorkerRun, zip: Zip): boolean {
  const scan = prescanFirstSheet(run, zip);
  if (!scan) return false;
  const { index, rows } = scan;
  const plan = windowsOfFirstSheet(zip, index, run.input.windowBytes);
  const unread = () => whyUnread(zip, index);
  if (plan) return parseWindows(run, zip, plan, rows, unread);
  if (index !== null) zip.FileIndex[index].content = isoDateCells(zip.FileIndex[index].content as Buffer);
  return postRows(run, run.parser.parse_zip(zip, sheetReadOptions(run.input.maxRows + 1)), true, rows, unread);
}

/**
 * The parser, as an ES module: SheetJS's ESM build does not load its
 * codepage tables (some 20 MB, for legacy formats that never reach this
 * worker). A CommonJS stand-in arrives with its exports as names too.
 */
async function loadParser(parserPath: string): Promise<Parser> {
  const { pathToFileURL } = require('node:url') as typeof import('node:url');
  return (await import(pathToFileURL(parserPath).href)) as Parser;
}

/**
 * ODS dates are calendar values (`office:date-value="2026-01-05"`, or with
 * a time and no zone), and arrive as `isoCellText` makes them: each date
 * cell becomes a text cell of that text before SheetJS reads it. SheetJS
 * would read the value through the process's time zone (a day alone as
 * UTC midnight shown in local time: the evening before in New York), into
 * a plain count of days since 1899-12-30, which Excel's 1900 system (SSF)
 * read back as another day before 1900-03-01 (1900-02-28 as 1900-02-29,
 * 1899-12-30 as a time, a negative serial as a number), and a zone's local
 * mean time before 1900 (New York's -4:56:02) shifted by seconds.
 */
function calendarDates(zip: Zip): void {
  const cellTag = /<(?:[\w.-]+:)?table-cell\s[^<>]*>/g;
  const dated = /(\s(?:[\w.-]+:)?value-type\s*=\s*)(["'])date\2/g;
  const value = /\s(?:[\w.-]+:)?date-value\s*=\s*(["'])([^"'<>]*)\1/;
  for (const entry of zip.FileIndex) {
    if (!isXmlPart(entry.content, 'document-content')) continue;
    // Bytes as latin1 characters: the tags are ASCII, and the rest goes back unchanged.
    const xml = entry.content.toString('latin1');
    const text = xml.replace(cellTag, (tag) => {
      const date = dated.test(tag) ? value.exec(tag) : null;
      dated.lastIndex = 0;
      if (!date) return tag;
      const typed = tag.replace(dated, (_, name: string, quote: string) => `${name}${quote}string${quote}`);
      return `${typed.slice(0, typed.endsWith('/>') ? -2 : -1)} office:string-value=${date[1]}${isoCellText(date[2])}${date[1]}${typed.endsWith('/>') ? '/>' : '>'}`;
    });
    entry.content = Buffer.from(text, 'latin1');
  }
}

/** The file's zip, with its ODS dates and East-Asian date formats rewritten for SheetJS before it reads any sheet. */
function readZip(parser: Parser, bytes: Uint8Array): Zip {
  const zip = parser.CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), { type: 'buffer' });
  calendarDates(zip);
  zip.FileIndex.forEach((entry) => {
    if (isXmlPart(entry.content, 'styleSheet')) entry.content = eastAsianDateFormats(entry.content);
  });
  return zip;
}

/** The whole parse: the first sheet's rows, the last batch, then `done` (nothing more once a cap or an unreadable sheet was posted). */
async function parseWorkbook(input: SheetWorkerInput, post: (message: SheetWorkerMessage) => void): Promise<void> {
  const parser = await loadParser(input.parserPath);
  const zip = readZip(parser, input.bytes);
  const run: SheetWorkerRun = { input, parser, post, batch: [], next: 0 };
  if (!parseFirstSheet(run, zip)) return;
  post({ type: 'rows', rows: run.batch });
  post({ type: 'done' });
}

/** The worker's steps: sheet-sandbox.ts declares their source in the worker's, ahead of `sheetWorkerMain`'s. */
export const SHEET_WORKER_STEPS = [
  sheetReadOptions,
  isXmlPart,
  firstSheetEntry,
  windowsOfFirstSheet,
  capPassed,
  lastRowToPost,
  firstSheetRead,
  postSheetRows,
  postRows,
  whyUnread,
  prescanFirstSheet,
  parseWindows,
  parseFirstSheet,
  loadParser,
  calendarDates,
  readZip,
  parseWorkbook,
];

/**
 * The body of the parsing worker. It runs as an `eval` worker (so the same
 * code serves the built server and the TypeScript test run), from the source
 * of this function, of its steps above and of the exported functions before
 * them (sheet-sandbox.ts assembles them): it must use nothing else from the
 * module around it, only `require` and its workerData.
 *
 * Before the parser is loaded the built-in prototypes are frozen, so a
 * prototype-pollution bug in the parser (CVE-2023-30533 in xlsx 0.18.5) fails
 * rather than succeeds; and whatever got through would only have touched this
 * throw-away isolate, never the server's.
 *
 * A large worksheet is handed to SheetJS a window of rows at a time (the
 * part's head, some rows, its close), with the rest of the workbook as it
 * is: SheetJS then holds one window's cells rather than the whole sheet's,
 * which is what bounds the memory of a big XLSX (docs/IMPORT.md). The
 * shared strings are parsed again for every window, so a window is at least
 * twice their size: that extra work stays under half the sheet's own.
 */
export function sheetWorkerMain(): void {
  const { parentPort, workerData } = require('node:worker_threads') as { parentPort: MessagePort; workerData: SheetWorkerInput };
  const post = (message: SheetWorkerMessage) => parentPort.postMessage(message);
  const builtins = [Object, Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype];
  for (const b of builtins) Object.freeze(b);
  parseWorkbook(workerData, post).catch((error: unknown) => post({ type: 'failed', message: String((error as Error)?.message ?? error).slice(0, 200) }));
}
