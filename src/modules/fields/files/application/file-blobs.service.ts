import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CardDeleted } from '../../../../shared/events/card.events.js';
import { OnAppEvent } from '../../../../shared/events/on-app-event.decorator.js';
import { ProjectDeleted } from '../../../../shared/events/workspace.events.js';
import { isDatabaseUnavailable } from '../../../../shared/persistence/database-availability.js';
import { UnitOfWork } from '../../../../shared/persistence/unit-of-work.js';
import { FieldValuesRepository } from '../../infrastructure/field-values.repository.js';
import { FileStorage, newFileKey } from '../infrastructure/file-storage.js';

const SWEEP_BATCH = 200;
/**
 * How long a stored file's key stays unsettled before the rows decide its
 * fate (`settleUnsettled`): far past any transaction that could still commit
 * it. A COMMIT whose answer never came was sent on a connection closed since
 * (a request's statement gets no answer after DATABASE_STATEMENT_TIMEOUT_MS
 * plus 5 s), so it has landed or never will, unless a stalled pooler in
 * between still holds it; an hour leaves room for that.
 */
const SETTLE_AFTER_MS = 60 * 60_000;
/** How often a running server looks for keys left unsettled (a COMMIT cut while it runs). */
const SETTLE_EVERY_MS = 10 * 60_000;
/** A temp file this old belongs to no write in progress (a put takes what writing its bytes takes). */
const STALE_TEMP_MS = 10 * 60_000;

/**
 * File contents live in the FileStorage, their rows in the database. Bytes are
 * written before the row (a row never points at nothing). A deleted row's key
 * is noted in `fields.released_blobs` by a trigger in the same transaction,
 * whatever deleted it (pop, set, a field, a card or a project going); the
 * contents are removed after the commit, so a rollback never loses a file.
 *
 * Contents stored for a transaction stay unsettled until it ends: deleted
 * when it rolls back, settled when it commits, and left alone when its
 * outcome is unknown (its COMMIT cut by the network: the row may be there),
 * as after a crash. Those are settled later by the rows: kept when a row
 * names them, deleted when none does (`settleUnsettled`). Deleting them at
 * once lost files whose rows had committed.
 */
@Injectable()
export class FileBlobs implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(FileBlobs.name);
  private settling?: NodeJS.Timeout;

  constructor(
    private readonly storage: FileStorage,
    private readonly values: FieldValuesRepository,
    private readonly uow: UnitOfWork,
  ) {}

  /**
   * Stores bytes for a row the caller's unit of work inserts (call inside
   * that unit): deleted if the unit rolls back, each attempt of it; settled
   * when it commits.
   */
  async store(bytes: Buffer): Promise<string> {
    const key = newFileKey();
    this.uow.afterRollback(() => this.deleteNow([key]));
    this.uow.afterCommit(() => this.storage.settle([key]));
    await this.storage.put(key, bytes);
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

  /** Leftovers of a crash: between commit and clean-up, and before a commit (temp files, unsettled keys). */
  async onApplicationBootstrap(): Promise<void> {
    try {
      const temps = await this.storage.removeStaleTemps(STALE_TEMP_MS);
      if (temps) this.logger.log(`removed ${temps} temp file(s) a write cut short left`);
      await this.sweep();
      await this.settleUnsettled();
    } catch (error) {
      this.logger.warn(`could not clean up released files: ${String(error)}`);
    }
    await this.checkStoreMatchesRows();
    this.settling = setInterval(() => void this.settleQuietly(), SETTLE_EVERY_MS).unref();
  }

  /**
   * A database restored without the file store that goes with it (README,
   * "Backups": on PostgreSQL the files are not in the dump) serves every file
   * as 404 with nothing else to tell. The start looks for the contents of the
   * first and the last file the rows name (an empty store, or one copied
   * before the latest uploads, lacks one of them) and says so in a `warn`
   * line: two look-ups, not a walk of the store.
   */
  async checkStoreMatchesRows(): Promise<void> {
    try {
      const missing: number[] = [];
      for (const file of await this.values.firstAndLastFiles()) if (!(await this.storage.has(file.key))) missing.push(file.id);
      if (missing.length) {
        this.logger.warn(
          `the file store lacks the contents of stored file(s) ${missing.join(' and ')}, and may lack more: ` +
            'they answer 404. Restore DATA_DIR/files from the backup taken with the database (README, "Backups")',
        );
      }
    } catch (error) {
      this.logger.warn(`could not check the file store against the database: ${String(error)}`);
    }
  }

  onApplicationShutdown(): void {
    clearInterval(this.settling);
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

  /**
   * Keys unsettled for `olderThanMs`: kept when a committed row names them,
   * deleted otherwise (their transaction never committed). Returns the keys
   * deleted. Throws while the database is away: they wait for the next round.
   */
  async settleUnsettled(olderThanMs = SETTLE_AFTER_MS): Promise<string[]> {
    const deleted: string[] = [];
    const keys = await this.storage.unsettled(olderThanMs);
    for (let i = 0; i < keys.length; i += SWEEP_BATCH) {
      const batch = keys.slice(i, i + SWEEP_BATCH);
      const named = await this.values.namedBlobs(batch);
      const orphans = batch.filter((key) => !named.has(key));
      await this.storage.settle([...named]);
      await this.deleteNow(orphans);
      deleted.push(...orphans);
    }
    if (deleted.length) this.logger.warn(`deleted ${deleted.length} stored file(s) whose transaction never committed`);
    return deleted;
  }

  private async settleQuietly(): Promise<void> {
    try {
      await this.settleUnsettled();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) this.logger.warn(`could not settle stored files: ${String(error)}`);
    }
  }

  /** Blobs whose rows are known not to exist: deleted rows (released), or a transaction that rolled back. */
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
