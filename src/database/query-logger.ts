import { Logger } from '@nestjs/common';
import type { Logger as OrmLogger } from 'typeorm';
import { sqlState } from '../shared/persistence/sql-errors.js';

/**
 * SQLSTATEs the server handles itself: retried by the unit of work
 * (serialization failure, deadlock, a NOWAIT lock), mapped to a 4xx or a 503
 * and logged there when it matters (violations, data exceptions, a
 * cancelled statement). A failed statement of these kinds is routine under
 * concurrency: debug, not warn.
 */
const HANDLED = /^(?:40001|40P01|55P03|57014|23505|23503|22...)$/;
/** A statement is logged up to this many characters (a filter's SQL runs to kilobytes). */
const STATEMENT_CHARS = 4000;

/**
 * TypeORM's messages through the app's logger, so the server's stdout stays
 * one JSON object per line (README, "Logs"). TypeORM's own console loggers
 * wrote a failed statement as coloured, multi-line text with its parameters
 * on stdout, between the JSON lines a log shipper reads. A failed statement
 * becomes one line with its SQLSTATE and its text, never its parameters
 * (they carry users' data); the request it failed in logs its own answer.
 */
export class QueryLogger implements OrmLogger {
  private readonly logger = new Logger('Database');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    const state = sqlState(error);
    const entry = {
      msg: `statement failed: ${typeof error === 'string' ? error : error.message}`,
      sqlState: state || undefined,
      statement: query.length > STATEMENT_CHARS ? `${query.slice(0, STATEMENT_CHARS)}…` : query,
    };
    if (HANDLED.test(state)) this.logger.debug(entry);
    else this.logger.warn(entry);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({ msg: `slow statement (${time} ms)`, statement: query.slice(0, STATEMENT_CHARS) });
  }

  logSchemaBuild(message: string): void {
    this.logger.debug(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
    else this.logger.log(String(message));
  }
}
