import type { MessagePort } from 'node:worker_threads';

/** What the sandbox hands its worker. */
export interface SheetWorkerInput {
  bytes: Uint8Array;
  /** Resolved path of the parser module (SheetJS, or a test's stand-in). */
  parserPath: string;
  maxRows: number;
  maxColumns: number;
  batchRows: number;
}

/** What the worker posts back: plain arrays of strings, never parser objects. */
export type SheetWorkerMessage =
  | { type: 'rows'; rows: string[][] }
  | { type: 'done' }
  | { type: 'too_many'; what: 'rows' | 'columns'; count: number }
  | { type: 'failed'; message: string };

/**
 * The body of the parsing worker. It runs as an `eval` worker (so the same
 * code serves the built server and the TypeScript test run), from this
 * function's source: it must use nothing from the module around it, only
 * `require` and its workerData.
 *
 * Before the parser is loaded the built-in prototypes are frozen, so a
 * prototype-pollution bug in the parser (CVE-2023-30533 in xlsx 0.18.5) fails
 * rather than succeeds; and whatever got through would only have touched this
 * throw-away isolate, never the server's.
 */
export function sheetWorkerMain(): void {
  const { parentPort, workerData } = require('node:worker_threads') as { parentPort: MessagePort; workerData: SheetWorkerInput };
  const post = (message: SheetWorkerMessage) => parentPort.postMessage(message);
  const builtins = [Object, Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype];
  for (const b of builtins) Object.freeze(b);

  type Cell = { t?: string; v?: unknown; w?: string; z?: string | number };
  type DateCode = { y: number; m: number; d: number; H: number; M: number; S: number };
  type Sheet = Array<Array<Cell | undefined> | undefined> & { '!ref'?: string; '!fullref'?: string };
  type Parser = {
    read(data: Uint8Array, options: Record<string, unknown>): {
      SheetNames: string[];
      Sheets: Record<string, Sheet>;
      Workbook?: { WBProps?: { date1904?: boolean } };
    };
    utils: { decode_range(ref: string): { s: { r: number; c: number }; e: { r: number; c: number } } };
    SSF: { is_date(format: string | number): boolean; parse_date_code(value: number, options?: unknown): DateCode | null };
  };

  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const text = (cell: Cell | undefined, parser: Parser, date1904: boolean): string => {
    if (!cell || cell.v === undefined || cell.v === null) return cell?.t === 'e' ? (cell.w ?? '') : '';
    if (cell.t === 'b') return cell.v ? 'true' : 'false';
    if (cell.t === 'e') return cell.w ?? '';
    if (cell.t === 'n' && typeof cell.v === 'number' && cell.z !== undefined && parser.SSF.is_date(cell.z)) {
      const d = parser.SSF.parse_date_code(cell.v, { date1904 });
      if (d) {
        const day = `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`;
        return d.H || d.M || d.S ? `${day}T${pad(d.H)}:${pad(d.M)}:${pad(d.S)}` : day;
      }
    }
    if (cell.v instanceof Date) {
      const v = cell.v;
      return `${pad(v.getFullYear(), 4)}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
    }
    return String(cell.v);
  };

  try {
    const parser = require(workerData.parserPath) as Parser;
    const book = parser.read(workerData.bytes, {
      type: 'buffer',
      dense: true,
      sheets: 0,
      sheetRows: workerData.maxRows + 1,
      cellNF: true,
      cellDates: false,
      cellFormula: false,
      cellHTML: false,
      cellText: false,
      cellStyles: false,
      bookVBA: false,
    });
    const sheet = book.SheetNames.length ? book.Sheets[book.SheetNames[0]] : undefined;
    if (!sheet || !sheet['!ref']) return post({ type: 'done' });
    const full = parser.utils.decode_range(sheet['!fullref'] ?? sheet['!ref']);
    if (full.e.r + 1 > workerData.maxRows) return post({ type: 'too_many', what: 'rows', count: full.e.r + 1 });
    if (full.e.c + 1 > workerData.maxColumns) return post({ type: 'too_many', what: 'columns', count: full.e.c + 1 });
    const date1904 = Boolean(book.Workbook?.WBProps?.date1904);
    const last = parser.utils.decode_range(sheet['!ref']).e.r;
    let batch: string[][] = [];
    for (let r = 0; r <= last; r++) {
      const cells = sheet[r] ?? [];
      const row: string[] = [];
      for (let c = 0; c < cells.length; c++) row.push(text(cells[c], parser, date1904));
      while (row.length && row[row.length - 1] === '') row.pop();
      sheet[r] = undefined;
      batch.push(row);
      if (batch.length === workerData.batchRows) {
        post({ type: 'rows', rows: batch });
        batch = [];
      }
    }
    post({ type: 'rows', rows: batch });
    post({ type: 'done' });
  } catch (error) {
    post({ type: 'failed', message: String((error as Error)?.message ?? error).slice(0, 200) });
  }
}
