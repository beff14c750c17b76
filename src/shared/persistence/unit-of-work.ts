import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { ServiceBusyError } from '../domain/domain-error.js';
import { apartFromClient } from '../client-watch.js';
import { commitOutcomeUnknown, SessionEndedError, sessionEndOf } from './database-availability.js';
import { constraintViolation, sqlState, violationAsDomainError } from './sql-errors.js';

type Hook = () => Promise<void> | void;

/** A class of what a unit of work publishes (an event class: the unit of work itself knows no events). */
export type PublishedClass = abstract new (...args: never[]) => object;

/** Whether a one-statement unit that publishes these classes needs a transaction after all (the event bus answers). */
export type StatementUnitCheck = (publishes: readonly PublishedClass[]) => boolean;

/** What runs between a long unit's batches, on its transaction (`betweenBatches`). */
export type BatchPause = (manager: EntityManager) => Promise<void>;

interface TxContext {
  manager: EntityManager;
  afterCommit: Hook[];
  afterRollback: Hook[];
  /** A one-statement unit (`runStatement`): no transaction is open. */
  single: boolean;
  /** The COMMIT (or the one statement) is sent and not answered yet: a failure now may have committed. */
  committing?: boolean;
}

/**
 * SQLSTATEs after which re-running the whole transaction can succeed:
 * serialization failure and deadlock, up to `MAX_ATTEMPTS`; and a lock taken
 * with NOWAIT that another transaction held (55P03, see `LOCK_WAIT_BUDGET_MS`):
 * a write that must lock a row out of the lock order does so rather than
 * wait for it, which could close a cycle, and runs again
 * (docs/card-tree.md, "Concurrency").
 */
const RETRYABLE = new Set(['40001', '40P01']);
/**
 * Attempts of a unit that keeps failing so. Under a loaded full test run,
 * eighteen requests crowding one group row (relocations and add-to-group
 * on the same column) deadlocked in a burst, the same processes chosen as
 * victims again and again, and five answered 500 after four attempts; the
 * pause before each new attempt (random, growing) keeps the same requests
 * from meeting again at once. Neither that conflict nor the tree's sibling
 * shifts deadlock any more (docs/ARCHITECTURE.md, "The one lock order");
 * the retries stay for what no test race reaches.
 */
const MAX_ATTEMPTS = 8;
const RETRY_PAUSE_MS = 10;
/**
 * A lock taken NOWAIT that another write holds (55P03) ends an attempt at
 * once, however long that write will still hold it: moving or deleting a
 * subtree of 100 000 cards holds its rows for two to three seconds. So the
 * unit polls instead of counting attempts: it runs again after a pause that
 * doubles up to `LOCK_POLL_MAX_MS`, for up to `LOCK_WAIT_BUDGET_MS`, about
 * what waiting for the lock would have cost. (Eight attempts gave up after
 * some 150 ms: a card created naming a card such a write held answered 500.)
 */
const LOCK_WAIT_BUDGET_MS = 15_000;
const LOCK_POLL_MAX_MS = 250;
/** What a client is told to wait when a unit still met other writes' locks after all its attempts. */
const CONTENTION_RETRY_AFTER_SECONDS = 1;

/** The pause before the next try after `waits` 55P03s in a row: doubling from `RETRY_PAUSE_MS` to `LOCK_POLL_MAX_MS`, its second half random. */
function lockPollPause(waits: number): Promise<unknown> {
  const pause = Math.min(LOCK_POLL_MAX_MS, RETRY_PAUSE_MS * 2 ** waits);
  return delay(pause / 2 + (Math.random() * pause) / 2);
}

/**
 * A statement the unit could not send because the database had ended its
 * transaction's session (`idle_in_transaction_session_timeout` after the
 * process froze, a reset while no statement waited): TypeORM let go of the
 * connection when pg said so, and refuses the next statement without a
 * cause (QueryRunner[Provider]AlreadyReleasedError). Said as what it is (`SessionEndedError`: a 503, nothing committed).
 */
function sessionEnded(error: unknown, manager: EntityManager): unknown {
  if (!(error instanceof QueryRunnerAlreadyReleasedError || error instanceof QueryRunnerProviderAlreadyReleasedError)) return error;
  const ended = sessionEndOf((manager.queryRunner as { databaseConnection?: unknown } | undefined)?.databaseConnection);
  return ended === undefined ? error : new SessionEndedError(ended);
}

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
  private needsTransaction: StatementUnitCheck = () => false;
  private batchPause: BatchPause | undefined;

  constructor(private readonly dataSource: DataSource) {}

  /** Set by the event bus: see `runStatement`. */
  decideStatementUnits(check: StatementUnitCheck): void {
    this.needsTransaction = check;
  }

  /** Set by the embedded database's upkeep (EmbeddedUpkeep), until it stops: see `betweenBatches`. A PostgreSQL server sets none. */
  pauseBetweenBatches(pause: BatchPause | undefined): void {
    this.batchPause = pause;
  }

  /**
   * Called by a long unit (an import's write pass) between two of its
   * batches: when a pause is set (the embedded database, whose kept plans
   * are remade there on the tables' sizes as the unit grows them), `settle`
   * first waits until none of the unit's statements is in the database,
   * then the pause runs on the unit's transaction. Without a pause (a
   * PostgreSQL server: autovacuum) neither runs, and the unit's batches go
   * on as they were, overlapping. Outside a transaction, nothing.
   */
  async betweenBatches(settle: () => Promise<void>): Promise<void> {
    const pause = this.batchPause;
    if (!pause || !this.inTransaction) return;
    await settle();
    await pause(this.manager);
  }

  /** The transaction's manager inside `run`, the data source's otherwise. */
  get manager(): EntityManager {
    return this.storage.getStore()?.manager ?? this.dataSource.manager;
  }

  /** Inside `run` (a transaction is open); false inside `runStatement`. */
  get inTransaction(): boolean {
    const ctx = this.storage.getStore();
    return ctx !== undefined && !ctx.single;
  }

  /** Inside `run` or `runStatement`: where events may be published. */
  get inUnit(): boolean {
    return this.storage.getStore() !== undefined;
  }

  /**
   * Runs `work` in a transaction. Without `isolation` it is the database's
   * default level (READ COMMITTED, which the design relies on) and no
   * `SET TRANSACTION` is sent; a level given explicitly is set.
   */
  async run<T>(work: () => Promise<T>, isolation?: Isolation): Promise<T> {
    if (this.storage.getStore()) return work();
    return this.attempts((ctx) => {
      const body = async (manager: EntityManager) => {
        ctx.manager = manager;
        const result = await this.storage.run(ctx, work);
        ctx.committing = true;
        return result;
      };
      return isolation ? this.dataSource.transaction(isolation, body) : this.dataSource.transaction(body);
    }, false);
  }

  /**
   * A unit of work whose whole change is ONE statement (a data-modifying
   * `WITH` that also writes its stream entries): sent without a transaction
   * around it, so without the BEGIN and COMMIT round trips. PostgreSQL makes
   * a single statement atomic by itself, and its locks last until it ends.
   * `publishes` names the event classes `work` may publish (after its
   * statement): when an in-tx handler of one of them needs a transaction
   * (any but the stream recorder, which writes nothing for events recorded
   * along: `ridesStatement`), the unit runs as `run` instead, so that handler
   * shares the change's fate; with today's handlers it never does. A second
   * statement in a unit without a transaction throws: it would be a change of
   * its own, not part of this one. Inside `run`, `work` joins that
   * transaction. Retried as `run` is.
   */
  async runStatement<T>(work: () => Promise<T>, publishes: readonly PublishedClass[] = []): Promise<T> {
    if (this.storage.getStore()) return work();
    if (publishes.length && this.needsTransaction(publishes)) return this.run(work);
    return this.attempts(async (ctx) => {
      const runner = this.dataSource.createQueryRunner();
      const send = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
      let sent = 0;
      (runner as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args) => {
        if (sent++) return Promise.reject(new Error('a one-statement unit of work (runStatement) sent a second statement'));
        ctx.committing = true;
        return send(...args).then((result) => ((ctx.committing = false), result));
      };
      ctx.manager = runner.manager;
      try {
        return await this.storage.run(ctx, work);
      } finally {
        await runner.release();
      }
    }, true);
  }

  /** One unit of work, attempted again after a failure that re-running can fix. */
  private async attempts<T>(attempt: (ctx: TxContext) => Promise<T>, single: boolean): Promise<T> {
    let violationRetried = false;
    const started = Date.now();
    let lockWaits = 0;
    let conflicts = 0;
    for (let n = 1; ; n++) {
      const ctx: TxContext = { manager: this.dataSource.manager, afterCommit: [], afterRollback: [], single };
      try {
        const result = await attempt(ctx);
        // The change is made: what follows it runs even if the client has left.
        await apartFromClient(() => this.runHooks(ctx.afterCommit, 'after-commit'));
        return result;
      } catch (caught) {
        const error = sessionEnded(caught, ctx.manager);
        if (ctx.committing && commitOutcomeUnknown(error)) throw this.outcomeUnknown(error);
        await this.runHooks(ctx.afterRollback, 'after-rollback');
        const state = sqlState(error);
        if (state === '55P03') {
          if (Date.now() - started < LOCK_WAIT_BUDGET_MS) {
            await lockPollPause(lockWaits++);
            continue;
          }
          throw this.contention(error, n);
        }
        if (RETRYABLE.has(state)) {
          if (++conflicts < MAX_ATTEMPTS) {
            await delay(Math.random() * RETRY_PAUSE_MS * conflicts);
            continue;
          }
          throw this.contention(error, n);
        }
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

  /**
   * The unit's COMMIT (or its one statement) was sent and its answer never
   * came (the connection cut or closed): the change may well be made, so
   * neither the after-commit nor the after-rollback hooks run, and it is not
   * attempted again. What the rollback hooks would have undone outside the
   * database (files stored) is settled later by what the database holds
   * (FileBlobs); deleting it lost files whose rows had committed.
   */
  private outcomeUnknown(error: unknown): unknown {
    this.logger.warn(`a unit of work's commit got no answer (${String(error)}): it may have committed; its rollback clean-up is skipped`);
    return error;
  }

  /**
   * A unit that kept meeting other writes (deadlocks, serialization failures,
   * rows held) after all its attempts changed nothing: that is the server
   * being busy, not a fault, so the client is told to retry (503) instead of
   * getting a 500 for a race (DESIGN.md §2).
   */
  private contention(error: unknown, attempts: number): ServiceBusyError {
    this.logger.warn(`a unit of work still met other writes after ${attempts} attempts (SQLSTATE ${sqlState(error)}): answered as busy`);
    return new ServiceBusyError(
      'the change kept meeting other changes of the same rows and was not made; retry after Retry-After seconds',
      CONTENTION_RETRY_AFTER_SECONDS,
    );
  }

  /**
   * Runs `step`, a step of the open transaction that takes rows NOWAIT
   * (rows of the lock order's step 1 found late), in a savepoint. On 55P03
   * only the step is undone (ROLLBACK TO SAVEPOINT) and tried again, after
   * the pause a unit's own attempts make, for up to `LOCK_WAIT_BUDGET_MS`
   * from its first try, then busy (503) as a unit is: what the transaction
   * did before it stays done and held (every card of a project, locked
   * once), where running the whole unit again made a long unit's first
   * 55P03 past the budget its last. Unless another session waits for a lock
   * this transaction holds: the holder may be waiting for it (a cycle no
   * retry of the step ends), so the 55P03 goes on and the outermost `run`
   * runs the whole unit again, holding nothing meanwhile. `step` publishes
   * no event and queues no hook (the savepoint's rollback would not take
   * them back); `attempt` counts its tries from 1.
   */
  async untilFree<T>(step: (attempt: number) => Promise<T>): Promise<T> {
    if (!this.inTransaction) throw new Error('untilFree called outside a transaction (uow.run)');
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      await this.manager.query('SAVEPOINT until_free');
      try {
        const result = await step(attempt);
        await this.manager.query('RELEASE SAVEPOINT until_free');
        return result;
      } catch (error) {
        if (sqlState(error) !== '55P03') throw error;
        await this.manager.query('ROLLBACK TO SAVEPOINT until_free');
        if (await this.waitedFor()) throw error;
        if (Date.now() - started >= LOCK_WAIT_BUDGET_MS) throw this.contention(error, attempt);
        await lockPollPause(attempt - 1);
      }
    }
  }

  /** Whether a session waits for a lock the open transaction holds (pg_locks: readable by any role). */
  private async waitedFor(): Promise<boolean> {
    const [row] = await this.manager.query(
      `SELECT EXISTS (SELECT 1 FROM pg_locks l WHERE NOT l.granted AND pg_backend_pid() = ANY (pg_blocking_pids(l.pid))) AS waited`,
    );
    return row.waited === true;
  }

  /**
   * Lifts the requests' statement timeout (DATABASE_STATEMENT_TIMEOUT_MS) for
   * the rest of the open transaction (`SET LOCAL`): for a use case whose
   * statements take as long as the data it was asked to change, with no cap on
   * that data (deleting a project), which a bound would make impossible to do
   * at all. Harmless on the embedded database, which has no timeout.
   */
  async liftStatementTimeout(): Promise<void> {
    if (!this.inTransaction) throw new Error('liftStatementTimeout called outside a transaction (uow.run)');
    await this.manager.query('SET LOCAL statement_timeout = 0');
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
