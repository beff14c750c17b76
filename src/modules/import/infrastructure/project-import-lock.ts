import { Injectable } from '@nestjs/common';
import { Sql } from '../../../shared/persistence/sql.js';

/** Advisory lock class of "imports into one project" (the second key is the project id); exported for the tests that hold it. */
export const PROJECT_IMPORTS_LOCK = 0x494d5054;

/**
 * Serialises the imports into one project, until the transaction ends: the
 * first step of the import's transaction, before the project row and the
 * caller's membership row (lock order step 0, docs/ARCHITECTURE.md). Only
 * imports take it, so nothing else waits for it.
 */
@Injectable()
export class ProjectImportLock {
  constructor(private readonly sql: Sql) {}

  /**
   * Takes the lock; true when another import held it, so that this one
   * waited and what that one wrote may be newer than this one's check pass.
   */
  async take(projectId: number): Promise<boolean> {
    const keys = [PROJECT_IMPORTS_LOCK, projectId];
    const free = await this.sql.one<{ taken: boolean }>(
      `SELECT pg_try_advisory_xact_lock($1::int, ($2::bigint % 2147483648)::int) AS taken`,
      keys,
    );
    if (free?.taken) return false;
    await this.sql.run(`SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483648)::int)`, keys);
    return true;
  }
}
