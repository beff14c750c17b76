import { Injectable, Logger } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { FileStorage, newFileKey } from '../infrastructure/file-storage.js';

/**
 * File contents live in the FileStorage, their rows in the database. Bytes are
 * written before the row (a row never points at nothing) and removed only
 * after the commit that dropped the row (a rollback never loses a file).
 */
@Injectable()
export class FileBlobs {
  private readonly logger = new Logger(FileBlobs.name);

  constructor(
    private readonly storage: FileStorage,
    private readonly uow: UnitOfWork,
  ) {}

  async store(bytes: Buffer, written: string[]): Promise<string> {
    const key = newFileKey();
    await this.storage.put(key, bytes);
    written.push(key);
    return key;
  }

  deleteAfterCommit(keys: string[]): void {
    if (!keys.length) return;
    this.uow.afterCommit(() => this.deleteNow(keys));
  }

  /** Clean-up of blobs whose rows were never committed (the use case failed). */
  async deleteNow(keys: string[]): Promise<void> {
    for (const key of keys) {
      try {
        await this.storage.delete(key);
      } catch (error) {
        this.logger.warn(`could not delete stored file ${key}: ${String(error)}`);
      }
    }
  }
}
