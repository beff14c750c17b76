import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Tables whose rows change on every authenticated request (rate-limit windows, `last_used_at`). */
const VOLATILE = new Set(['identity.rate_limit_windows', 'identity.api_keys']);

/**
 * A fingerprint of every row of every table (but the volatile ones), so a
 * suite can assert that a series of refused requests changed nothing at all.
 */
export async function snapshotRows(app: INestApplication): Promise<Record<string, string>> {
  const ds = app.get(DataSource);
  const tables: Array<{ table_schema: string; table_name: string }> = await ds.query(
    `SELECT table_schema, table_name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
      ORDER BY 1, 2`,
  );
  const snapshot: Record<string, string> = {};
  for (const { table_schema: schema, table_name: name } of tables) {
    const key = `${schema}.${name}`;
    if (VOLATILE.has(key)) continue;
    const [row] = await ds.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS h FROM "${schema}"."${name}" t`,
    );
    snapshot[key] = `${row.n}:${row.h}`;
  }
  return snapshot;
}
