import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';

/** One row of a sheet: cell texts, trailing empty cells dropped. */
export type SheetRow = string[];

/**
 * The rows of a discovered spreadsheet as stored for the import step: JSON
 * lines, one row per line, gzipped in independent members (a gzip stream may
 * hold several; gunzip reads them as one). Writing a member per batch keeps
 * memory flat while a parser pushes rows, and the import reads them back as a
 * stream, so neither step holds a whole sheet of row objects.
 */
export class RowStoreWriter {
  private readonly members: Buffer[] = [];
  private bytes = 0;
  private rows = 0;

  push(rows: SheetRow[]): void {
    if (!rows.length) return;
    const text = rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
    const member = gzipSync(text, { level: 1 });
    this.members.push(member);
    this.bytes += member.length;
    this.rows += rows.length;
  }

  get rowCount(): number {
    return this.rows;
  }

  finish(): Buffer {
    return Buffer.concat(this.members, this.bytes);
  }
}

/** Streams the rows back, in order. */
export async function* readStoredRows(stored: Buffer): AsyncGenerator<SheetRow> {
  const lines = createInterface({ input: Readable.from([stored]).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line) yield JSON.parse(line) as SheetRow;
  }
}
