import { Injectable } from '@nestjs/common';
import { jsonColumn } from '../../../shared/persistence/sql.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { DiscoveredField } from '../domain/sheet-summary.js';
import type { SpreadsheetFormat } from '../domain/spreadsheet-format.js';

/** How long a discovered spreadsheet waits for its import (DESIGN.md §8). */
export const UPLOAD_TTL_HOURS = 24;

export interface NewUpload {
  userId: number;
  format: SpreadsheetFormat;
  fileName: string;
  byteSize: number;
  rowCount: number;
  columnCount: number;
  fields: DiscoveredField[];
  rowsGz: Buffer;
}

export interface StoredUpload {
  id: number;
  userId: number;
  format: SpreadsheetFormat;
  rowCount: number;
  columnCount: number;
  fields: DiscoveredField[];
  rowsGz: Buffer;
}

type Raw = Record<string, unknown>;

/** The importer schema: uploads waiting for their import step. */
@Injectable()
export class UploadsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  async insert(upload: NewUpload): Promise<number> {
    const rows: Raw[] = await this.uow.manager.query(
      `INSERT INTO importer.uploads (user_id, format, file_name, byte_size, row_count, column_count, fields, rows_gz, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(hours => $9))
       RETURNING id`,
      [
        upload.userId,
        upload.format,
        upload.fileName,
        upload.byteSize,
        upload.rowCount,
        upload.columnCount,
        JSON.stringify(upload.fields),
        upload.rowsGz,
        UPLOAD_TTL_HOURS,
      ],
    );
    return Number(rows[0].id);
  }

  /** The caller's upload, unless it does not exist, is someone else's, or has expired. */
  async findLive(id: number, userId: number): Promise<StoredUpload | null> {
    const rows: Raw[] = await this.uow.manager.query(
      `SELECT id, user_id, format, row_count, column_count, fields, rows_gz
         FROM importer.uploads WHERE id = $1 AND user_id = $2 AND expires_at > now()`,
      [id, userId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: Number(r.id),
      userId: Number(r.user_id),
      format: r.format as SpreadsheetFormat,
      rowCount: Number(r.row_count),
      columnCount: Number(r.column_count),
      fields: jsonColumn<DiscoveredField[]>(r.fields),
      // pg answers a Buffer, PGlite a Uint8Array.
      rowsGz: Buffer.from(r.rows_gz as Uint8Array),
    };
  }

  /** Removes uploads past their 24 hours; returns how many went. */
  async deleteExpired(): Promise<number> {
    const rows: Raw[] = await this.uow.manager.query(
      `WITH gone AS (DELETE FROM importer.uploads WHERE expires_at <= now() RETURNING 1) SELECT count(*) AS n FROM gone`,
    );
    return Number(rows[0].n);
  }
}
