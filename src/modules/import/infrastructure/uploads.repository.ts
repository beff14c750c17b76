import { Injectable } from '@nestjs/common';
import { jsonColumn, returnedRows } from '../../../shared/persistence/sql.js';
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

/** What one user's live (unexpired) uploads hold. */
export interface LiveUploads {
  count: number;
  /** Stored bytes: the gzipped rows. */
  bytes: number;
  /** Seconds until the first of them expires (0 when there is none). */
  firstExpiresIn: number;
}

/** Advisory lock class of "one user's uploads" (the second key is the user id). */
const USER_UPLOADS_LOCK = 0x494d5055;

/** The importer schema: uploads waiting for their import step. */
@Injectable()
export class UploadsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The user's live uploads, counted. */
  async liveOf(userId: number): Promise<LiveUploads> {
    const rows: Raw[] = await this.uow.manager.query(
      `SELECT count(*) AS n, coalesce(sum(octet_length(rows_gz)), 0) AS bytes,
              coalesce(ceil(extract(epoch FROM min(expires_at) - now())), 0) AS first
         FROM importer.uploads WHERE user_id = $1 AND expires_at > now()`,
      [userId],
    );
    return { count: Number(rows[0].n), bytes: Number(rows[0].bytes), firstExpiresIn: Math.max(0, Number(rows[0].first)) };
  }

  /**
   * Holds the user's uploads until the transaction ends, so that two
   * discovers at once count each other (the quota is checked, then the row
   * inserted).
   */
  async lockUser(userId: number): Promise<void> {
    await this.uow.manager.query(`SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483648)::int)`, [USER_UPLOADS_LOCK, userId]);
  }

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

  /**
   * Deletes the caller's live upload; false when there was none (as
   * findLive). Two deletions at once: the second waits for the first's row
   * lock, finds the row gone when it re-checks, and deletes nothing.
   */
  async deleteLive(id: number, userId: number): Promise<boolean> {
    const result: unknown = await this.uow.manager.query(
      `DELETE FROM importer.uploads WHERE id = $1 AND user_id = $2 AND expires_at > now() RETURNING id`,
      [id, userId],
    );
    return returnedRows(result).length > 0;
  }

  /** Removes uploads past their 24 hours; returns how many went. */
  async deleteExpired(): Promise<number> {
    const rows: Raw[] = await this.uow.manager.query(
      `WITH gone AS (DELETE FROM importer.uploads WHERE expires_at <= now() RETURNING 1) SELECT count(*) AS n FROM gone`,
    );
    return Number(rows[0].n);
  }
}
