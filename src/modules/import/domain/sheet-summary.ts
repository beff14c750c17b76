import type { ImportLimits } from '../../../config/app-config.js';
import { withUnsafeReplaced } from '../../../shared/domain/safe-text.js';
import { SpreadsheetTooLargeError } from './import.errors.js';

/** One column as discover shows it (DESIGN.md §8). */
export interface DiscoveredField {
  /** 0-based; the key of the import's mapping. */
  column: number;
  /** The first row's cell, or "Column A", "Column B"… when it is empty. */
  name: string;
  /** A few non-empty values of the rows below the first. */
  samples: string[];
}

const SAMPLES = 3;
const SAMPLE_CHARS = 200;
const NAME_CHARS = 1024;

/** "A", "B", … "Z", "AA": the column letters spreadsheet programs show. */
export function columnLetters(column: number): string {
  let n = column + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** Drops trailing empty cells, so a row's length is its last filled column. */
export function trimRow(cells: string[]): string[] {
  let end = cells.length;
  while (end > 0 && cells[end - 1] === '') end--;
  return end === cells.length ? cells : cells.slice(0, end);
}

type ShapeLimits = Pick<ImportLimits, 'maxRows' | 'maxColumns' | 'maxCellChars'>;

/**
 * Watches the rows of a sheet go by: enforces the row, column and cell caps
 * (each failure names its environment variable) and gathers what discover
 * answers, without keeping the rows.
 */
export class SheetSummary {
  private rows = 0;
  private columns = 0;
  private header: string[] = [];
  private readonly samples: string[][] = [];

  constructor(
    private readonly limits: ShapeLimits,
    /** The spreadsheet's row number of the first row seen (rows above it are empty). */
    readonly firstRow = 1,
  ) {}

  /** Checks one row (already trimmed by `trimRow`); throws when it passes a cap. */
  add(row: string[]): void {
    const rowNumber = this.firstRow + this.rows;
    this.rows++;
    if (this.rows > this.limits.maxRows) {
      throw new SpreadsheetTooLargeError(`The spreadsheet has more than ${this.limits.maxRows} rows`, 'IMPORT_MAX_ROWS');
    }
    if (row.length > this.limits.maxColumns) {
      throw new SpreadsheetTooLargeError(
        `Row ${rowNumber} has ${row.length} columns, more than ${this.limits.maxColumns}`,
        'IMPORT_MAX_COLUMNS',
      );
    }
    this.columns = Math.max(this.columns, row.length);
    row.forEach((cell, column) => {
      if (cell.length > this.limits.maxCellChars) {
        throw new SpreadsheetTooLargeError(
          `The cell at row ${rowNumber}, column ${column} (${columnLetters(column)}) holds more than ${this.limits.maxCellChars} characters`,
          'IMPORT_MAX_CELL_CHARS',
        );
      }
    });
    // Names and samples are only shown (and kept with the upload as JSON, which
    // cannot hold a NUL): such characters show as U+FFFD; the import refuses
    // the cells themselves, naming their rows.
    if (this.rows === 1) this.header = row.map((cell) => withUnsafeReplaced(cell.trim().slice(0, NAME_CHARS)));
    else this.sample(row);
  }

  private sample(row: string[]): void {
    row.forEach((cell, column) => {
      const value = cell.trim();
      if (!value) return;
      const seen = (this.samples[column] ??= []);
      if (seen.length >= SAMPLES) return;
      const sample = withUnsafeReplaced(value.slice(0, SAMPLE_CHARS));
      if (!seen.includes(sample)) seen.push(sample);
    });
  }

  get rowCount(): number {
    return this.rows;
  }

  get columnCount(): number {
    return this.columns;
  }

  fields(): DiscoveredField[] {
    return Array.from({ length: this.columns }, (_, column) => ({
      column,
      name: this.header[column] || `Column ${columnLetters(column)}`,
      samples: this.samples[column] ?? [],
    }));
  }
}
