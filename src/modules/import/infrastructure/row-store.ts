import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
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

/**
 * Streams the rows back, in order, as many as each decompressed chunk holds
 * (a hundred or so): one await per chunk rather than per row, which keeps the
 * garbage of a 100 000-row pass down (each awaited promise is an allocation,
 * and more with async context tracking on).
 */
export async function* readStoredRows(stored: Buffer): AsyncGenerator<SheetRow[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of Readable.from([stored]).pipe(createGunzip())) {
    const lines = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = lines.pop()!;
    const rows: SheetRow[] = [];
    for (const line of lines) if (line) rows.push(JSON.parse(line) as SheetRow);
    if (rows.length) yield rows;
  }
  rest += decoder.end();
  if (rest) yield [JSON.parse(rest) as SheetRow];
}
