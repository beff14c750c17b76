import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

/** How often the write-ahead log's growth is looked at (one tiny statement): soon after an import. */
const CHECK_EVERY_MS = 10_000;
/** Growth of the write-ahead log after which the statistics are taken again: an import of a few thousand rows, or some thousands of requests. */
const ANALYZE_AFTER_WAL_BYTES = 4 * 1024 * 1024;

/**
 * The planner statistics of the embedded database. PGlite runs PostgreSQL
 * in single-user mode, without autovacuum, so no table was ever analyzed
 * and every statement was planned on default estimates: an index scan
 * thought to return one row returned thousands, once per card. A filter of
 * 25 and-ed field tests over 2 000 cards took 9 s on PGlite (0.5 s once
 * analyzed), and PGlite runs on the event loop, so the whole server stood
 * still meanwhile. This does autovacuum's analyzing for it: once at start,
 * then whenever the write-ahead log has grown by ANALYZE_AFTER_WAL_BYTES
 * since (its position moves with every write; PGlite keeps no table
 * statistics to count changes by). A PostgreSQL server analyzes by itself.
 */
@Injectable()
export class EmbeddedStatistics implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(EmbeddedStatistics.name);
  private timer: NodeJS.Timeout | undefined;
  /** The log's position when the statistics were last taken. */
  private analyzedAt = -Infinity;

  constructor(
    private readonly ds: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.embedded) return;
    await this.maintain();
    this.timer = setInterval(() => void this.maintain(), CHECK_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Analyzes the database when the log has grown enough since the last time; whether it did. */
  async maintain(): Promise<boolean> {
    try {
      const position = await this.walPosition();
      if (position - this.analyzedAt < ANALYZE_AFTER_WAL_BYTES) return false;
      await this.ds.query('ANALYZE');
      this.analyzedAt = position;
      return true;
    } catch (error) {
      this.logger.warn(`could not analyze the embedded database: ${String(error)}`);
      return false;
    }
  }

  private async walPosition(): Promise<number> {
    const [row] = (await this.ds.query(`SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS bytes`)) as Array<{ bytes: string }>;
    return Number(row.bytes);
  }
}
