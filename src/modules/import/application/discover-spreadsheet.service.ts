import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config.js';
import { clientWatch } from '../../../shared/client-watch.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { discoverWithoutFile, SpreadsheetTooLargeError, UploadQuotaError } from '../domain/import.errors.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { SheetSummary, trimRow, type DiscoveredField } from '../domain/sheet-summary.js';
import { classifyZip, sniffContainer, type SpreadsheetFormat } from '../domain/spreadsheet-format.js';
import { readCsv } from '../infrastructure/csv-reader.js';
import { RowStoreWriter, type SheetRow } from '../infrastructure/row-store.js';
import { SheetSandbox } from '../infrastructure/sheet-sandbox.js';
import { UploadsRepository, type LiveUploads } from '../infrastructure/uploads.repository.js';
import { asSheetJsReads, prescanZip } from '../infrastructure/zip-prescan.js';

/** The discover answer (DESIGN.md §8). */
export interface DiscoverResult {
  file_id: number;
  format: SpreadsheetFormat;
  rows: number;
  fields: DiscoveredField[];
}

/** The uploaded part, as the upload interceptor leaves it on the request. */
export interface SpreadsheetUpload {
  buffer: Buffer;
  originalname?: string;
}

/**
 * Step 1 of an import: reads an untrusted spreadsheet safely (format by
 * content, zip pre-scan, SheetJS in a sandbox or a streaming CSV parser, caps
 * on everything), keeps its rows for 24 hours and describes its columns.
 */
@Injectable()
export class DiscoverSpreadsheetService {
  constructor(
    private readonly config: AppConfig,
    private readonly uow: UnitOfWork,
    private readonly uploads: UploadsRepository,
    private readonly sandbox: SheetSandbox,
  ) {}

  /** `params`: what else the request sent (text parts, a JSON or form body); discover takes nothing but the file. */
  async discover(file: SpreadsheetUpload | undefined, actor: Actor, params?: unknown): Promise<DiscoverResult> {
    if (!file) throw discoverWithoutFile(params);
    // Before the parse (its cost), and again with the rows' size as they are stored.
    this.checkQuota(await this.uploads.liveOf(actor.userId), 0);
    const summary = new SheetSummary(this.config.importLimits);
    const store = new RowStoreWriter();
    const collect = (rows: SheetRow[]) => {
      const trimmed = rows.map(trimRow);
      for (const row of trimmed) summary.add(row);
      store.push(trimmed);
    };
    const format = await this.read(file.buffer, collect);
    const fields = summary.fields();
    const rowsGz = store.finish();
    const id = await this.uow.run(async () => {
      await this.uploads.lockUser(actor.userId);
      this.checkQuota(await this.uploads.liveOf(actor.userId), rowsGz.length);
      return this.uploads.insert({
        userId: actor.userId,
        format,
        fileName: (file.originalname ?? '').slice(0, 1024),
        byteSize: file.buffer.length,
        rowCount: summary.rowCount,
        columnCount: summary.columnCount,
        fields,
        rowsGz,
      });
    });
    return { file_id: id, format, rows: summary.rowCount, fields };
  }

  /**
   * A user's live uploads are capped in number and stored bytes (each waits
   * 24 hours for its import): 429 until the first expires. Rows that could
   * never fit, even with nothing else stored, are a 413.
   */
  private checkQuota(live: LiveUploads, adding: number): void {
    const { uploadsPerUser, uploadBytesPerUser } = this.config.importLimits;
    if (adding > uploadBytesPerUser) {
      throw new SpreadsheetTooLargeError(`the spreadsheet's rows take ${adding} bytes stored, more than one user may keep`, 'IMPORT_UPLOAD_BYTES_PER_USER_MAX');
    }
    if (live.count >= uploadsPerUser) {
      throw new UploadQuotaError(`you have ${live.count} discovered spreadsheets waiting for their import, the most one user may keep`, 'IMPORT_UPLOADS_PER_USER_MAX', live.firstExpiresIn);
    }
    if (live.bytes + adding > uploadBytesPerUser) {
      throw new UploadQuotaError(
        `your discovered spreadsheets waiting for their import take ${live.bytes} bytes stored; with this one's ${adding} that is more than one user may keep`,
        'IMPORT_UPLOAD_BYTES_PER_USER_MAX',
        live.firstExpiresIn,
      );
    }
  }

  private async read(bytes: Buffer, collect: (rows: SheetRow[]) => void): Promise<SpreadsheetFormat> {
    const container = sniffContainer(bytes);
    if (container.kind === 'text') {
      await readCsv(bytes.subarray(container.bomLength), container.encoding, this.config.importLimits.maxCellChars, collect);
      return 'csv';
    }
    const listing = await prescanZip(bytes, this.config.importLimits);
    const format = classifyZip(listing.entryNames, listing.mimetype);
    // Stopped if the uploader leaves: nobody would read the file's id.
    await this.sandbox.parse(asSheetJsReads(bytes, listing), collect, clientWatch()?.signal());
    return format;
  }
}
