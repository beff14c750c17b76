import { afterAll, describe, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { MIGRATIONS } from '../../../migrations/index.js';
import { EMBEDDED_PG_MAJOR } from '../../../src/database/embedded-driver.js';
import { freePort, processDatabase, runCli, runToExit, startServer, type ProcessDatabase } from '../../support/server-process.js';
import { adminQuery, assertTestDatabase, withDatabase } from '../../support/test-db.js';

/**
 * Upgrades and mixed versions (README, "Upgrading"). A build never runs on
 * a database a newer build migrated: an old release's OAuth cleanup
 * cascaded through a foreign key a later migration added and deleted live
 * logins. The built server and CLI, on DATABASE_URL's PostgreSQL or on the
 * embedded database.
 */

type Query = <T>(sql: string) => Promise<T[]>;

/** Runs `work` on the process database while no process holds it. */
async function onDatabase<T>(db: ProcessDatabase, work: (query: Query) => Promise<T>): Promise<T> {
  if (db.embedded) {
    const lite = await PGlite.create(path.join(db.env.DATA_DIR, 'db'));
    try {
      return await work(async <R>(sql: string) => (await lite.query<R>(sql)).rows);
    } finally {
      await lite.close();
    }
  }
  const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
  await client.connect();
  try {
    return await work(async <R>(sql: string) => (await client.query(sql)).rows as R[]);
  } finally {
    await client.end();
  }
}

/** Every row of every table, and every relation and constraint: what "changed nothing" compares. */
async function fingerprint(query: Query): Promise<Record<string, string>> {
  const tables = await query<{ s: string; t: string }>(
    `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
  );
  const print: Record<string, string> = {};
  for (const { s, t } of tables) {
    const [row] = await query<{ n: number; h: string }>(`SELECT count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${s}"."${t}" x`);
    print[`${s}.${t}`] = `${row.n}:${row.h}`;
  }
  const [schema] = await query<{ h: string }>(
    `SELECT md5(string_agg(n, '|' ORDER BY n)) AS h FROM (
       SELECT c.relnamespace::regnamespace::text || '.' || c.relname || ':' || c.relkind::text AS n FROM pg_class c
        WHERE c.relnamespace::regnamespace::text NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
       UNION ALL SELECT conrelid::regclass::text || '.' || conname FROM pg_constraint WHERE connamespace::regnamespace::text NOT IN ('pg_catalog', 'information_schema')
     ) o`,
  );
  print['(schema)'] = schema.h;
  return print;
}

/** The lines a refused process wrote that are not JSON log lines. */
const plainLines = (output: string) => output.split('\n').filter((line) => line.trim() && !line.startsWith('{'));

const FUTURE = 'IdentitySomethingLater1899999999999';
const NEWER = new RegExp(
  `the database was migrated by a newer cardwork \\(migration ${FUTURE}\\): run that version, or revert those migrations with it first \\(npx typeorm migration:revert -d dist/ormconfig\\.js, once per migration\\)$`,
);

describe('a database migrated by a newer cardwork', () => {
  it('is refused by the server (whatever MIGRATIONS_RUN says) and by every CLI command, in one line, exit 1, changing nothing', async () => {
    const db = await processDatabase();
    try {
      // A populated database, as an older build left it; then a newer build's migration recorded.
      if (db.embedded) expect(runCli(['migrate'], db.env).status).toBe(0);
      db.createUser('olduser');
      const before = await onDatabase(db, async (query) => {
        await query(`INSERT INTO public.migrations (timestamp, name) VALUES (1899999999999, '${FUTURE}')`);
        return fingerprint(query);
      });

      for (const migrationsRun of ['true', 'false']) {
        const refused = await runToExit({ ...db.env, MIGRATIONS_RUN: migrationsRun, PORT: String(await freePort()) }, 30_000);
        expect({ migrationsRun, code: refused.code }).toEqual({ migrationsRun, code: 1 });
        expect(plainLines(refused.output)).toEqual([expect.stringMatching(new RegExp(`^cardwork failed to start: ${NEWER.source}`))]);
        expect(refused.output).not.toMatch(/"stack"|\n\s+at |ExceptionHandler/);
      }
      for (const command of [['migrate'], ['user', 'create', '--username', 'newuser', '--email', 'newuser@example.test'], ['apikey', 'list', '--user', '@olduser']]) {
        const cli = runCli(command, db.env);
        expect({ command, status: cli.status, stdout: cli.stdout }).toEqual({ command, status: 1, stdout: '' });
        expect(plainLines(cli.stderr)).toEqual([expect.stringMatching(new RegExp(`^cardwork: ${NEWER.source}`))]);
      }

      expect(await onDatabase(db, fingerprint)).toEqual(before);
    } finally {
      await db.drop();
    }
  }, 180_000);

  it('is not what an unknown migration dated before the build\'s newest says (a hotfix by hand): the start and the CLI go on, with a warning', async () => {
    const db = await processDatabase();
    const HOTFIX = 'HotfixByHand1700000000000';
    try {
      if (db.embedded) expect(runCli(['migrate'], db.env).status).toBe(0);
      db.createUser('olduser');
      await onDatabase(db, (query) => query(`INSERT INTO public.migrations (timestamp, name) VALUES (1700000000000, '${HOTFIX}')`));
      const warning = `the database has applied migration(s) this build does not have, dated before its newest (${HOTFIX}): started anyway`;
      const cli = runCli(['apikey', 'list', '--user', '@olduser'], db.env);
      expect([cli.status, plainLines(cli.stderr)]).toEqual([0, [`cardwork: warning: ${warning}`]]);
      const server = await startServer(db.env);
      await server.stop();
      const warned = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.msg === warning);
      expect(warned.map((line) => line.level)).toEqual([40]);
    } finally {
      await db.drop();
    }
  }, 180_000);
});

describe('the migrations a start applies', () => {
  it('are named in one info line, and a start with none pending says nothing of them', async () => {
    const serverUrl = process.env.DATABASE_URL;
    const name = `cardwork_test_${randomBytes(6).toString('hex')}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-applied-'));
    const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    if (serverUrl) {
      assertTestDatabase(name);
      await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
      env.DATABASE_URL = withDatabase(serverUrl, name);
    }
    const appliedLines = (output: string) =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; context?: string; msg: string; migrations?: string[] })
        .filter((line) => line.context === 'Database' && /migration/.test(line.msg));
    try {
      // In the order TypeORM applies them: by the timestamp their name ends with.
      const names = MIGRATIONS.map((M) => new M().name).sort((a, b) => Number(a.slice(-13)) - Number(b.slice(-13)));
      for (const expected of [[{ level: 30, msg: `applied ${names.length} migration(s): ${names.join(', ')}`, migrations: names }], []]) {
        const server = await startServer(env);
        await server.stop();
        expect(appliedLines(server.output()).map(({ level, msg, migrations }) => ({ level, msg, migrations }))).toEqual(expected);
      }
    } finally {
      if (serverUrl) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

/** Every file under `dir` with its size and content hash: what "left as it is" compares. */
function tree(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, file)] = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  }
  return files;
}

describe('an embedded DATA_DIR another PostgreSQL major wrote (a PGlite upgrade)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-major-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('is refused by the server and the CLI in one line naming both versions and the cure, exit 1, the directory untouched', async () => {
    // The embedded database whatever DATABASE_URL says.
    const env = { DATA_DIR: dataDir };
    expect(runCli(['migrate'], env).status).toBe(0);
    const other = EMBEDDED_PG_MAJOR - 1;
    fs.writeFileSync(path.join(dataDir, 'db', 'PG_VERSION'), `${other}\n`);
    const before = tree(dataDir);
    const line = new RegExp(
      `the embedded database in ${dataDir}/db was written by PostgreSQL ${other}, and this build runs PostgreSQL ${EMBEDDED_PG_MAJOR} \\(PGlite\\): ` +
        `dump it with the cardwork version that wrote it and restore the dump into an empty DATA_DIR with this one; the directory was left as it is$`,
    );

    const refused = await runToExit({ ...env, PORT: String(await freePort()) }, 30_000);
    expect(refused.code).toBe(1);
    expect(plainLines(refused.output)).toEqual([expect.stringMatching(new RegExp(`^cardwork failed to start: ${line.source}`))]);
    const cli = runCli(['migrate'], env);
    expect({ status: cli.status, stdout: cli.stdout }).toEqual({ status: 1, stdout: '' });
    expect(plainLines(cli.stderr)).toEqual([expect.stringMatching(new RegExp(`^cardwork: ${line.source}`))]);

    expect(tree(dataDir)).toEqual(before);
  }, 120_000);
});
