import { describe, it } from '@jest/globals';

/**
 * Tests that need a PostgreSQL server (DATABASE_URL): races that need two
 * transactions at once (the embedded database runs one at a time), a second
 * connection holding a row, several server processes on one database. On
 * the embedded database they are reported as skipped, never as passed
 * without having run.
 */
export const onPostgres = Boolean(process.env.DATABASE_URL);
export const itOnPostgres = onPostgres ? it : it.skip;
export const describeOnPostgres = onPostgres ? describe : describe.skip;
