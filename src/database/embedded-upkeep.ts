import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DataSource, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { UnitOfWork } from '../shared/persistence/unit-of-work.js';

/** Opens every statement a round sends, so that a spy on the query runner can tell them from a request's. */
export const UPKEEP_MARK = '/* embedded upkeep */';

/** How often the write-ahead log's growth is looked at (one tiny statement) when no transaction commits. */
const CHECK_EVERY_MS = 10_000;
/** Growth of the write-ahead log after which the tables' counters are read (an import or deletion of a hundred cards, or some hundreds of requests). */
const LOOK_AFTER_WAL_BYTES = 256 * 1024;
/** Inside a long unit, a table is analyzed again once it is this many times the size (in pages) it was last analyzed at... */
const GROWN_FACTOR = 2;
/** ...counting at least this many pages (32 KiB): what a scan per row costs below that stays small. */
const GROWN_MIN_PAGES = 4;

/**
 * Autovacuum's defaults (PostgreSQL's `autovacuum_*` settings): a table is
 * analyzed once more rows than these changed since its last ANALYZE, and
 * vacuumed once it holds more dead rows, or more rows inserted since its
 * last VACUUM, than these.
 */
export const UPKEEP_THRESHOLDS = {
  analyze: { base: 50, scale: 0.1 },
  vacuum: { base: 50, scale: 0.2 },
  insertVacuum: { base: 1000, scale: 0.2 },
  /** A table whose oldest unfrozen transaction id is older than this is vacuumed with FREEZE (autovacuum_freeze_max_age is 200 million; 2^31 stops all writes). */
  freezeAfterXids: 100_000_000,
  /** Tables frozen per round at most, so that one round stays short. */
  freezePerRound: 3,
};

interface TableDue {
  name: string;
  /** Past a vacuum threshold (else only past the analyze one). */
  vacuum: boolean;
}

/**
 * Autovacuum's job on the embedded database. PGlite runs PostgreSQL in
 * single-user mode, without autovacuum: no table was ever analyzed, vacuumed
 * or frozen by itself.
 *
 * - Plans. Every statement was planned on default estimates (a filter of 25
 *   field tests over 2 000 cards took 9 s, 0.5 s once analyzed), and worse,
 *   the plans PostgreSQL keeps for the session (those of the foreign keys'
 *   checks and cascades, and of triggers' statements) were made once, when
 *   the tables were small: a sequential scan per row checked or cascaded. A
 *   20 000-row import after some use inserted each batch slower than the one
 *   before (its foreign-key checks scanned all cards per row) and a project
 *   deletion scanned every child table once per card; PGlite runs on the
 *   event loop, so the server stood still for more than ten minutes. An
 *   ANALYZE of a table drops the plans kept for it (PostgreSQL remakes them
 *   at their next use, on the sizes it found), inside a transaction too. So
 *   the tables whose rows changed past autovacuum's threshold are analyzed
 *   right after the transaction that changed them commits, on its
 *   connection, before any other statement runs; a one-statement write is
 *   looked at by the check every CHECK_EVERY_MS. And a long unit that grows
 *   tables itself (an import's write pass) pauses between its batches
 *   (`UnitOfWork.betweenBatches`): the tables it has grown past twice the
 *   size they were last analyzed at (GROWN_FACTOR, from GROWN_MIN_PAGES) are
 *   analyzed there, in its transaction, so the plans its next rows use are
 *   made on their sizes as they are; a table is analyzed so a few times per
 *   unit, however large it grows. (Planning every statement afresh instead,
 *   `plan_cache_mode = force_custom_plan`, also held, but planned each row
 *   checked or cascaded: a 3 000-row import took 1.4 times as long, 20 000
 *   rows twice, their project's deletion two and three times; docs/PERFORMANCE.md.)
 * - Dead rows and transaction ids. Tables whose dead rows (or rows inserted
 *   since their last VACUUM) pass autovacuum's thresholds are vacuumed (with
 *   ANALYZE), and the few tables whose unfrozen transaction ids are oldest,
 *   once older than `freezeAfterXids`, are vacuumed with FREEZE, so that the
 *   database never nears the transaction-id wraparound that stops writes.
 *
 * The counters are read only once the write-ahead log has grown by
 * LOOK_AFTER_WAL_BYTES since the last round (its position moves with every
 * write), so a commit costs one tiny statement. A round runs between
 * transactions only: after a commit, or on a connection of its own (the
 * embedded pool lends its one connection to one query runner at a time). A
 * PostgreSQL server has autovacuum and is left alone (no pause either).
 */
@Injectable()
export class EmbeddedUpkeep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EmbeddedUpkeep.name);
  private timer: NodeJS.Timeout | undefined;
  private subscriber: EntitySubscriberInterface | undefined;
  /** The log's position when the counters were last looked at. */
  private lookedAt = -Infinity;

  constructor(
    private readonly ds: DataSource,
    private readonly config: AppConfig,
    private readonly uow: UnitOfWork,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.embedded) return;
    await this.ds.query('ANALYZE');
    this.uow.pauseBetweenBatches((manager) => this.analyzeGrown((sql) => manager.query(`${UPKEEP_MARK} ${sql}`)));
    this.lookedAt = await this.walPosition((sql) => this.ds.query(`${UPKEEP_MARK} ${sql}`));
    this.subscriber = { afterTransactionCommit: (event: TransactionCommitEvent) => this.afterCommit(event.queryRunner) };
    this.ds.subscribers.push(this.subscriber);
    this.timer = setInterval(() => void this.maintain(), CHECK_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    this.stopPeriodicCheck();
    this.uow.pauseBetweenBatches(undefined);
    if (this.subscriber) this.ds.subscribers.splice(this.ds.subscribers.indexOf(this.subscriber), 1);
    this.subscriber = undefined;
  }

  /** Only commits start a round from now on (tests that must know when one runs). */
  stopPeriodicCheck(): void {
    clearInterval(this.timer);
  }

  /**
   * One round on a connection of its own (the check every CHECK_EVERY_MS),
   * once the pool lends it: no transaction is open then, and no other round
   * runs (it would hold the connection); whether it analyzed or vacuumed.
   */
  async maintain(): Promise<boolean> {
    const runner = this.ds.createQueryRunner();
    try {
      await runner.connect();
      return await this.round(runner);
    } finally {
      await runner.release();
    }
  }

  /**
   * Between two batches of a long unit, in its transaction: the tables
   * grown past GROWN_FACTOR times their size when last analyzed are
   * analyzed (their kept plans are remade at their next use). A failure is
   * the unit's: its transaction cannot go on after a failed statement.
   */
  private async analyzeGrown(query: (sql: string) => Promise<unknown>): Promise<void> {
    for (const t of (await query(tablesGrownSql())) as Array<{ name: string }>) await query(`ANALYZE ${t.name}`);
  }

  /** After a transaction's COMMIT, on its connection, before it is released. */
  private async afterCommit(runner: QueryRunner): Promise<void> {
    if (runner.isTransactionActive || runner.isReleased) return; // a savepoint released: the transaction goes on
    await this.round(runner);
  }

  /** Never throws: after a commit, the change is made whatever happens here. */
  private async round(runner: QueryRunner): Promise<boolean> {
    const query = (sql: string) => runner.query(`${UPKEEP_MARK} ${sql}`) as Promise<unknown>;
    try {
      const position = await this.walPosition(query);
      if (position - this.lookedAt < LOOK_AFTER_WAL_BYTES) return false;
      this.lookedAt = position;
      // The counters are sent at the next statement's end: the last transaction's changes count.
      await query('SELECT pg_stat_force_next_flush()');
      const tables = (await query(tablesDueSql())) as TableDue[];
      const frozen = (await query(tablesToFreezeSql())) as Array<{ name: string }>;
      for (const t of tables) await query(t.vacuum ? `VACUUM (ANALYZE) ${t.name}` : `ANALYZE ${t.name}`);
      for (const t of frozen) await query(`VACUUM (FREEZE) ${t.name}`);
      // What the round itself wrote is no reason for another.
      if (tables.length + frozen.length) this.lookedAt = await this.walPosition(query);
      return tables.length + frozen.length > 0;
    } catch (error) {
      this.logger.warn(`could not look after the embedded database: ${String(error)}`);
      return false;
    }
  }

  private async walPosition(query: (sql: string) => Promise<unknown>): Promise<number> {
    const [row] = (await query(`SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS bytes`)) as Array<{ bytes: string }>;
    return Number(row.bytes);
  }
}

/** The user tables past autovacuum's thresholds: to analyze, or to vacuum (and analyze). */
function tablesDueSql(): string {
  const { analyze, vacuum, insertVacuum } = UPKEEP_THRESHOLDS;
  const rows = 'greatest(c.reltuples, 0)';
  return `
    SELECT format('%I.%I', s.schemaname, s.relname) AS name,
           s.n_dead_tup > ${vacuum.base} + ${vacuum.scale} * ${rows}
             OR s.n_ins_since_vacuum > ${insertVacuum.base} + ${insertVacuum.scale} * ${rows} AS vacuum
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.n_mod_since_analyze > ${analyze.base} + ${analyze.scale} * ${rows}
        OR s.n_dead_tup > ${vacuum.base} + ${vacuum.scale} * ${rows}
        OR s.n_ins_since_vacuum > ${insertVacuum.base} + ${insertVacuum.scale} * ${rows}
     ORDER BY s.relid`;
}

/** The user tables (their pages as the transaction sees them) past GROWN_FACTOR times their pages when last analyzed. */
function tablesGrownSql(): string {
  return `
    SELECT format('%I.%I', s.schemaname, s.relname) AS name
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE pg_relation_size(c.oid) > ${GROWN_FACTOR} * greatest(c.relpages, ${GROWN_MIN_PAGES}) * current_setting('block_size')::int
     ORDER BY s.relid`;
}

/** The tables (system catalogs too; a table's TOAST table is frozen with it) whose unfrozen transaction ids are oldest, past the threshold. */
function tablesToFreezeSql(): string {
  const { freezeAfterXids, freezePerRound } = UPKEEP_THRESHOLDS;
  return `
    SELECT format('%I.%I', n.nspname, c.relname) AS name
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
     WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
       AND greatest(age(c.relfrozenxid), coalesce(age(t.relfrozenxid), 0)) > ${freezeAfterXids}
     ORDER BY greatest(age(c.relfrozenxid), coalesce(age(t.relfrozenxid), 0)) DESC, c.oid
     LIMIT ${freezePerRound}`;
}
