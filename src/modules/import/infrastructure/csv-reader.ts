import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { sniffDelimiter } from '../domain/csv-dialect.js';
import { SpreadsheetTooLargeError, UnreadableSpreadsheetError } from '../domain/import.errors.js';
import type { TextEncoding } from '../domain/spreadsheet-format.js';
import type { SheetRow } from './row-store.js';
import { nextTurn } from '../../../shared/event-loop.js';

const CHUNK_BYTES = 64 * 1024;
const BATCH_ROWS = 2000;
/**
 * A record may be this many times IMPORT_MAX_CELL_CHARS long before the parser
 * gives up on it. Without such a stop a single giant field is buffered to the
 * end of the file, character by character, before any cell check could run.
 */
export const RECORD_CELLS_FACTOR = 8;

/** The file's bytes as text chunks; decoding in pieces keeps a second copy of the file out of memory. */
function* decodedChunks(bytes: Buffer, encoding: TextEncoding): Generator<string> {
  const decoder = new TextDecoder(encoding);
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
    yield decoder.decode(bytes.subarray(at, at + CHUNK_BYTES), { stream: true });
  }
  const tail = decoder.decode();
  if (tail) yield tail;
}

/**
 * Hands the chunks over one event-loop turn apart: a stream fed from memory
 * would otherwise run the parser over the whole file in one go, and other
 * requests would wait for it.
 */
async function* politely(first: string, rest: Generator<string>): AsyncGenerator<string> {
  yield first;
  for (const chunk of rest) {
    await nextTurn();
    yield chunk;
  }
}

interface CsvParseError {
  code: string;
  lines?: number;
}

/**
 * Duck-typed: csv-parse's errors carry an upper-case code (instanceof fails
 * across jest's VM contexts). Most start with CSV_, but not all: csv-parse 7
 * names one INVALID_OPENING_QUOTE, and that one answered 500.
 */
function isCsvError(error: unknown): error is CsvParseError {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z_]*$/.test(code);
}

function syntaxError(error: CsvParseError): UnreadableSpreadsheetError {
  const line = typeof error.lines === 'number' ? ` near line ${error.lines}` : '';
  const what = error.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quoted field is never closed' : 'malformed quoting';
  return new UnreadableSpreadsheetError(`CSV syntax error${line}: ${what}`);
}

function recordTooLong(error: CsvParseError, maxCellChars: number): SpreadsheetTooLargeError {
  const line = typeof error.lines === 'number' ? ` near line ${error.lines}` : '';
  return new SpreadsheetTooLargeError(
    `A CSV record${line} is longer than ${maxCellChars * RECORD_CELLS_FACTOR} characters (${RECORD_CELLS_FACTOR} times the cell limit)`,
    'IMPORT_MAX_CELL_CHARS',
  );
}

/**
 * Parses CSV text with csv-parse as a stream (never SheetJS, DESIGN.md §8) and
 * hands the records to `onRows` in batches; `onRows` may throw to stop (a cap
 * was passed). Records may have different lengths; a byte-order mark has
 * been skipped by the caller through `bomLength`.
 */
export async function readCsv(
  bytes: Buffer,
  encoding: TextEncoding,
  maxCellChars: number,
  onRows: (rows: SheetRow[]) => void,
): Promise<void> {
  const chunks = decodedChunks(bytes, encoding);
  const first = chunks.next();
  if (first.done) return;
  const parser = Readable.from(politely(first.value, chunks)).pipe(
    parse({
      delimiter: sniffDelimiter(first.value),
      relax_column_count: true,
      // A quote inside an unquoted field is a character of it (`12" screen`),
      // as spreadsheet programs read it; a quoted field must still be closed.
      relax_quotes: true,
      skip_empty_lines: false,
      max_record_size: maxCellChars * RECORD_CELLS_FACTOR,
    }),
  );
  let batch: SheetRow[] = [];
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      batch.push(record);
      if (batch.length === BATCH_ROWS) {
        onRows(batch);
        batch = [];
      }
    }
  } catch (error) {
    if (isCsvError(error) && error.code === 'CSV_MAX_RECORD_SIZE') throw recordTooLong(error, maxCellChars);
    if (isCsvError(error)) throw syntaxError(error);
    throw error;
  } finally {
    parser.destroy();
  }
  onRows(batch);
}
