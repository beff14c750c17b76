import {
  ConcurrencyLimitedError,
  ConflictError,
  DomainError,
  InvalidInputError,
  NotFoundError,
  PayloadTooLargeError,
  UnsupportedMediaError,
  type FieldProblem,
} from '../../../shared/domain/domain-error.js';

/** Not XLSX, CSV or ODS by its content (DESIGN.md §8): 415. */
export class UnsupportedSpreadsheetError extends UnsupportedMediaError {
  constructor(detail: string) {
    super(`Unsupported spreadsheet format: ${detail}. Send an XLSX, CSV or ODS file`);
  }
}

/** A cap of docs/IMPORT.md was passed (bytes, rows, columns, cell length, zip sizes): 413. */
export class SpreadsheetTooLargeError extends PayloadTooLargeError {
  constructor(detail: string, variable: string) {
    super(`${detail} (limit set by ${variable})`, undefined, { limit: variable });
  }
}

/**
 * The user's discovered spreadsheets waiting for their import already hold
 * as many files or stored bytes as one user may keep: 429, with Retry-After
 * the time until the first of them expires (docs/IMPORT.md).
 */
export class UploadQuotaError extends ConcurrencyLimitedError {
  constructor(detail: string, variable: string, retryAfterSeconds: number) {
    super(
      `${detail} (limit set by ${variable}); each is kept 24 hours after its discover, retry after Retry-After seconds`,
      Math.max(1, retryAfterSeconds),
      'IMPORT.UPLOAD_QUOTA',
    );
  }
}

/**
 * No live upload of the caller has this file_id: unknown, expired, deleted,
 * or another user's. One answer for all, so the ids of others' uploads are
 * not revealed (DESIGN.md §2).
 */
export class UploadNotFoundError extends NotFoundError {
  constructor() {
    super('Spreadsheet upload', 'IMPORT.UPLOAD_NOT_FOUND');
  }
}

/** The file claims a supported format but cannot be read safely: corrupt, hostile or too slow to parse. */
export class UnreadableSpreadsheetError extends DomainError {
  readonly code = 'IMPORT.UNREADABLE_FILE';
  readonly kind = 'invalid' as const;
  constructor(detail: string) {
    super(`The spreadsheet cannot be read: ${detail}`, [{ field: 'file', message: detail }]);
  }
}

/** One problem of one row: `row` is the spreadsheet's 1-based row, `column` the 0-based mapped column (the mapping key's number). */
export interface RowProblem extends FieldProblem {
  row: number;
  column: number;
  message: string;
}

/** Some rows cannot be imported; nothing was written (DESIGN.md §8). */
export class ImportRowsInvalidError extends DomainError {
  readonly code = 'IMPORT.ROWS_INVALID';
  readonly kind = 'invalid' as const;
  constructor(problems: RowProblem[], total: number) {
    const shown = problems.length < total ? ` (the first ${problems.length} are listed)` : '';
    super(`${total} problem${total === 1 ? '' : 's'} in the spreadsheet's rows; nothing was imported${shown}`, problems, {
      error_count: total,
    });
  }
}

/** A field the mapping names was deleted between the check and the write: 409, nothing written. */
export class ImportFieldDeletedError extends ConflictError {
  constructor(column: number, name: string) {
    super(`mapping.${column}.name: the field "${name}" was deleted while the import ran; nothing was imported`, 'IMPORT.FIELD_DELETED');
  }
}

/**
 * Discover without a file: 400 naming `file`, and each other parameter sent
 * (a text part such as `mapping`, a JSON or form body's key), which discover
 * does not take (DESIGN.md §2: an unknown parameter is named, never ignored).
 * Beside a file the upload refuses them itself (MultipartUpload); without
 * one it leaves them to the handler. A text part named `file` is the
 * spreadsheet sent as text, not as a file.
 */
export function discoverWithoutFile(params: unknown): InvalidInputError {
  const names = params !== null && typeof params === 'object' ? Object.keys(params) : [];
  const file: FieldProblem = {
    field: 'file',
    message: names.includes('file')
      ? 'send the spreadsheet as a file (a part with a file name: curl -F "file=@sheet.xlsx"), not as text'
      : 'is required: send the spreadsheet as a multipart/form-data part named "file"',
  };
  const others = names.filter((name) => name !== 'file').map((field) => ({ field, message: 'is not a part this upload takes (only the file part "file")' }));
  const problems = [file, ...others];
  return new InvalidInputError(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
}

/** A body property of the import request is wrong: 400 naming it. */
export function invalidImportInput(field: string, message: string): InvalidInputError {
  return new InvalidInputError(`${field}: ${message}`, [{ field, message }]);
}
