import { Injectable } from '@nestjs/common';
import { Sql } from '../../../../shared/persistence/sql.js';

/** Which stored contents the file rows name (fields.files.storage_key is unique: one lookup per key). */
@Injectable()
export class FileRowsRepository {
  constructor(private readonly sql: Sql) {}

  /** Those of `keys` that a committed file row names. */
  async named(keys: string[]): Promise<Set<string>> {
    if (!keys.length) return new Set();
    const rows = await this.sql.rows(`SELECT storage_key FROM fields.files WHERE storage_key = ANY($1::text[])`, [keys]);
    return new Set(rows.map((r) => String(r.storage_key)));
  }
}
