import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CardDeleted } from '../../../../shared/events/card.events.js';
import { OnAppEvent } from '../../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../../shared/events/workspace.events.js';
import { UnitOfWork } from '../../../../shared/persistence/unit-of-work.js';
import { FieldValuesRepository } from '../../infrastructure/field-values.repository.js';
import { FileStorage, newFileKey } from '../infrastructure/file-storage.js';

const SWEEP_BATCH = 200;

/**
 * File contents live in the FileStorage, their rows in the database. Bytes are
 * written before the row (a row never points at nothing). A deleted row's key
 * is noted in `fields.released_blobs` by a trigger in the same transaction,
 * whatever deleted it (pop, set, a field, a card or a project going); the
 * contents are removed after the commit, so a rollback never loses a file.
 */
@Injectable()
export class FileBlobs implements OnApplicationBootstrap {
  private readonly logger = new Logger(FileBlobs.name);

  constructor(
    private readonly storage: FileStorage,
    private readonly values: FieldValuesRepository,
    private readonly uow: UnitOfWork,
  ) {}

  async store(bytes: Buffer, written: string[]): Promise<string> {
    const key = newFileKey();
    await this.storage.put(key, bytes);
    written.push(key);
    return key;
  }

  /** Call inside a transaction that may delete file rows. */
  sweepAfterCommit(): void {
    this.uow.afterCommit(() => this.sweep());
  }

  /** Card and project deletions cascade to file rows in other modules' transactions. */
  @OnAppEvent([CardDeleted, ProjectDeleted], { phase: 'after-commit' })
  async onDeletion(): Promise<void> {
    await this.sweep();
  }

  /** Leftovers of a crash between commit and clean-up. */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.sweep();
    } catch (error) {
      this.logger.warn(`could not clean up released files: ${String(error)}`);
    }
  }

  async sweep(): Promise<void> {
    for (;;) {
      const keys = await this.values.releasedBlobs(SWEEP_BATCH);
      if (!keys.length) return;
      await this.deleteNow(keys);
      await this.values.forgetReleasedBlobs(keys);
      if (keys.length < SWEEP_BATCH) return;
    }
  }

  /** Blobs written by a use case that then failed: their rows were never committed. */
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
