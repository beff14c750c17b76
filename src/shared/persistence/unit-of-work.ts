import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { constraintViolation, sqlState, violationAsDomainError } from './sql-errors.js';

type Hook = () => Promise<void> | void;

interface TxContext {
  manager: EntityManager;
  afterCommit: Hook[];
  afterRollback: Hook[];
}

/** SQLSTATEs after which re-running the whole transaction can succeed. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 4;

export type Isolation = 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/**
 * Transaction boundary of a use case. The EntityManager of the open transaction
 * lives in AsyncLocalStorage, so repositories always read `uow.manager` and a
 * nested `run` joins the outer transaction (an import calling the card API is
 * one atomic change).
 */
@Injectable()
export class UnitOfWork {
  private readonly storage = new AsyncLocalStorage<TxContext>();
  private readonly logger = new Logger(UnitOfWork.name);

  constructor(private readonly dataSource: DataSource) {}

  /** The transaction's manager inside `run`, the data source's otherwise. */
  get manager(): EntityManager {
    return this.storage.getStore()?.manager ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return this.storage.getStore() !== undefined;
  }

  /**
   * Runs `work` in a transaction. Without `isolation` it is the database's
   * default level (READ COMMITTED, which the design relies on) and no
   * `SET TRANSACTION` is sent; a level given explicitly is set.
   */
  async run<T>(work: () => Promise<T>, isolation?: Isolation): Promise<T> {
    if (this.storage.getStore()) return work();
    let violationRetried = false;
    for (let attempt = 1; ; attempt++) {
      const ctx: TxContext = { manager: this.dataSource.manager, afterCommit: [], afterRollback: [] };
      const body = (manager: EntityManager) => {
        ctx.manager = manager;
        return this.storage.run(ctx, work);
      };
      try {
        const result = await (isolation ? this.dataSource.transaction(isolation, body) : this.dataSource.transaction(body));
        await this.runHooks(ctx.afterCommit, 'after-commit');
        return result;
      } catch (error) {
        await this.runHooks(ctx.afterRollback, 'after-rollback');
        if (attempt < MAX_ATTEMPTS && RETRYABLE.has(sqlState(error))) continue;
        // A unique or foreign-key violation no use case mapped is, in a correct
        // use case, a concurrent request changing what its checks saw (two
        // adds of one member; a field added to a project being deleted). The
        // use case is run once more against the state as it is now, where its
        // own checks give the right answer (409, 404); one that still violates
        // becomes 409 or 404 here. This is the one place that makes races
        // never answer 500 (DESIGN.md §2).
        const violation = constraintViolation(error);
        if (!violation) throw error;
        if (!violationRetried) {
          violationRetried = true;
          continue;
        }
        this.logger.warn(`constraint ${violation.constraint ?? '?'} still violated after a re-run: answered as ${violation.kind === 'unique' ? 409 : 404}`);
        throw violationAsDomainError(violation);
      }
    }
  }

  /** Queues work for after the outermost commit; dropped on rollback. */
  afterCommit(fn: () => Promise<void> | void): void {
    const ctx = this.storage.getStore();
    if (!ctx) throw new Error('afterCommit called outside a unit of work');
    ctx.afterCommit.push(fn);
  }

  /**
   * Queues clean-up of work done outside the database (files written) for when
   * the outermost transaction rolls back (each attempt of a retried one);
   * dropped on commit.
   */
  afterRollback(fn: () => Promise<void> | void): void {
    const ctx = this.storage.getStore();
    if (!ctx) throw new Error('afterRollback called outside a unit of work');
    ctx.afterRollback.push(fn);
  }

  private async runHooks(hooks: Hook[], phase: string): Promise<void> {
    for (const fn of hooks) {
      try {
        await fn();
      } catch (error) {
        this.logger.error(`${phase} handler failed: ${String(error)}`);
      }
    }
  }
}
