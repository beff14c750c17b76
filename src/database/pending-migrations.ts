import type { DataSource } from 'typeorm';

/**
 * The names of the migrations this build has and the database has not
 * applied, in their order. Read without writing: TypeORM's own check creates
 * its `migrations` table first, and a server started with MIGRATIONS_RUN=false
 * must not change the schema.
 */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  const [{ present }] = (await ds.query(`SELECT to_regclass('public.migrations') IS NOT NULL AS present`)) as Array<{ present: boolean }>;
  const applied = new Set(present ? ((await ds.query(`SELECT name FROM public.migrations`)) as Array<{ name: string }>).map((r) => r.name) : []);
  return ds.migrations.map((m) => m.name ?? m.constructor.name).filter((name) => !applied.has(name));
}

/**
 * With MIGRATIONS_RUN=false the server serves only a schema that is up to
 * date: otherwise `/ready` said 200 while every request failed on a missing
 * table (a 500), until someone ran `cardwork migrate`.
 */
export async function refusePendingMigrations(ds: DataSource): Promise<void> {
  const pending = await pendingMigrations(ds);
  if (!pending.length) return;
  const shown = pending.length > 3 ? `${pending.slice(0, 3).join(', ')} and ${pending.length - 3} more` : pending.join(', ');
  throw new Error(
    `${pending.length} migration(s) are not applied to the database and MIGRATIONS_RUN is false: ` +
      `run \`npx cardwork migrate\` first, or start with MIGRATIONS_RUN=true (pending: ${shown})`,
  );
}
