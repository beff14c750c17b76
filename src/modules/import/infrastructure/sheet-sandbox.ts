import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ImportLimits } from '../../../config/app-config.js';
import { ClientGoneError } from '../../../shared/client-watch.js';
import { SpreadsheetTooLargeError, UnreadableSpreadsheetError } from '../domain/import.errors.js';
import type { SheetRow } from './row-store.js';
import {
  cellTags,
  danglingSharedString,
  eastAsianDateFormats,
  isoCellText,
  isoDateCells,
  lastRowNumber,
  sheetCellText,
  sheetPartComplete,
  sheetWindows,
  SHEET_WORKER_STEPS,
  sheetWorkerMain,
  xmlRootIs,
  type SheetWorkerInput,
  type SheetWorkerMessage,
} from './sheet-worker.js';

/** The worker's code: its main function and the functions it calls, from their own source (a test runs it in a process of another time zone). */
export const WORKER_SOURCE =
  [sheetCellText, isoCellText, cellTags, danglingSharedString, isoDateCells, eastAsianDateFormats, xmlRootIs, sheetWindows, lastRowNumber, sheetPartComplete, ...SHEET_WORKER_STEPS]
    .map(String)
    .join('\n') + `\n(${String(sheetWorkerMain)})();`;
const BATCH_ROWS = 2000;
/**
 * Worksheet XML handed to SheetJS at a time. Measured on a 100 000-row sheet
 * (22 MB of XML): the parse adds 75 MB of peak RSS with 2 MiB windows, 94 MB
 * with 4 MiB, 115 MB with 8 MiB and 176 MB at once, in the same time.
 */
const WINDOW_BYTES = 2 * 1024 * 1024;
/**
 * The worker's young generation: a small one keeps the garbage of each
 * window's parse from piling up between collections (16 MiB → 4 MiB saved
 * about 10 MB of peak RSS on that sheet, at no cost in time).
 */
const WORKER_YOUNG_GENERATION_MB = 4;
/** SheetJS's ES module build: the CommonJS one also loads codepage tables the worker never needs. */
const XLSX_PATH = createRequire(import.meta.url).resolve('xlsx/xlsx.mjs');

type SandboxLimits = Pick<ImportLimits, 'maxRows' | 'maxColumns' | 'parseTimeoutMs' | 'workerHeapMb' | 'parallelParses'>;

/** Only arrays of strings cross back from the worker; anything else means it misbehaved. */
function isRows(value: unknown): value is SheetRow[] {
  return Array.isArray(value) && value.every((row) => Array.isArray(row) && row.every((cell) => typeof cell === 'string'));
}

/** A small counting semaphore: at most `size` workers parse at once, the others wait their turn. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** A slot, once one is free; rejects with `ClientGoneError` if `signal` aborts while it waits. */
  async take(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw new ClientGoneError('waiting to parse a spreadsheet');
    if (this.free > 0) this.free--;
    else await this.wait(signal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        reject(new ClientGoneError('waiting to parse a spreadsheet'));
      };
      this.waiting.push(turn);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
}

/**
 * Parses XLSX and ODS files with SheetJS in a fresh worker thread per file
 * (DESIGN.md §8): a heap cap, a wall-clock timeout after which the worker is
 * terminated (a regex stuck in catastrophic backtracking included), and no
 * reuse, so whatever a hostile file did to the parser's isolate dies with it.
 * The worker posts back batches of plain string rows.
 */
export class SheetSandbox {
  private readonly slots: Slots;

  private readonly parserPath: string;
  private readonly windowBytes: number;

  constructor(
    private readonly limits: SandboxLimits,
    /**
     * The parser module (tests substitute a misbehaving one to prove the
     * isolation) and the window size (tests make it small to cut small sheets).
     */
    options: { parserPath?: string; windowBytes?: number } = {},
  ) {
    this.slots = new Slots(limits.parallelParses);
    this.parserPath = options.parserPath ?? XLSX_PATH;
    this.windowBytes = options.windowBytes ?? WINDOW_BYTES;
  }

  /**
   * Parses `bytes`, handing the rows to `onRows` a batch at a time. When
   * `signal` aborts (the request's client went away: `ClientWatch.signal`), a
   * parse waiting for its turn leaves the queue and a running one's worker
   * is terminated, so its slot and core go to the next upload at once
   * rather than when the parse ends or times out.
   */
  async parse(bytes: Buffer, onRows: (rows: SheetRow[]) => void, signal?: AbortSignal): Promise<void> {
    const release = await this.slots.take(signal);
    try {
      await this.run(bytes, onRows, signal);
    } finally {
      release();
    }
  }

  private run(bytes: Buffer, onRows: (rows: SheetRow[]) => void, signal: AbortSignal | undefined): Promise<void> {
    const input: SheetWorkerInput = {
      bytes: new Uint8Array(bytes),
      parserPath: this.parserPath,
      maxRows: this.limits.maxRows,
      maxColumns: this.limits.maxColumns,
      batchRows: BATCH_ROWS,
      windowBytes: this.windowBytes,
    };
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: input,
      transferList: [input.bytes.buffer as ArrayBuffer],
      resourceLimits: { maxOldGenerationSizeMb: this.limits.workerHeapMb, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, stackSizeMb: 4 },
      stdout: true,
      stderr: true,
      env: {},
    });
    // Whatever the parser prints is dropped rather than left to pile up.
    worker.stdout.resume();
    worker.stderr.resume();
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const stop = () => finish(new ClientGoneError('parsing a spreadsheet'));
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
        void worker.terminate();
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () => finish(new UnreadableSpreadsheetError(`parsing took longer than ${this.limits.parseTimeoutMs} ms (IMPORT_PARSE_TIMEOUT_MS)`)),
        this.limits.parseTimeoutMs,
      );
      if (signal?.aborted) stop();
      else signal?.addEventListener('abort', stop, { once: true });
      worker.on('message', (message: SheetWorkerMessage) => {
        try {
          this.receive(message, onRows, finish);
        } catch (error) {
          finish(error);
        }
      });
      worker.on('error', (error: Error & { code?: string }) => finish(this.workerError(error)));
      worker.on('exit', () => finish(new UnreadableSpreadsheetError('the parser stopped before the end of the file')));
    });
  }

  private receive(message: SheetWorkerMessage, onRows: (rows: SheetRow[]) => void, finish: (error?: unknown) => void): void {
    switch (message?.type) {
      case 'rows':
        if (!isRows(message.rows)) return finish(new UnreadableSpreadsheetError('the parser returned something other than rows'));
        return onRows(message.rows);
      case 'done':
        return finish();
      case 'too_many':
        return finish(
          message.what === 'rows'
            ? new SpreadsheetTooLargeError(`The spreadsheet has more than ${this.limits.maxRows} rows`, 'IMPORT_MAX_ROWS')
            : new SpreadsheetTooLargeError(
                `The spreadsheet has ${message.count} columns, more than ${this.limits.maxColumns}`,
                'IMPORT_MAX_COLUMNS',
              ),
        );
      case 'failed':
        return finish(new UnreadableSpreadsheetError(`the parser rejected it (${message.message})`));
      case 'unreadable':
        return finish(new UnreadableSpreadsheetError(String(message.message).slice(0, 300)));
      default:
        return finish(new UnreadableSpreadsheetError('the parser sent an unexpected message'));
    }
  }

  private workerError(error: Error & { code?: string }): Error {
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new SpreadsheetTooLargeError(
        `Parsing the spreadsheet needs more than ${this.limits.workerHeapMb} MiB of memory`,
        'IMPORT_WORKER_HEAP_MB',
      );
    }
    return new UnreadableSpreadsheetError('the parser failed');
  }
}
