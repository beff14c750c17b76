import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { adminQuery, assertTestDatabase, withDatabase } from '../../support/test-db.js';
import { freePort, processDatabase, runCli, runToExit, startServer } from '../../support/server-process.js';

/**
 * A DBA's own settings on the database or the role (ALTER DATABASE/ROLE …
 * SET) do not change what the app reads or where it keeps its tables
 * (docs/RELIABILITY.md, "What the database needs"). Each case runs the built
 * server and CLI, as an operator does, on a database of its own.
 */
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;

const databaseOf = (url: string) => new URL(url).pathname.slice(1);

/** The app's schemas: a role of one of these names finds its own schema first once the migrations made it. */
const APP_SCHEMAS = ['importer', 'web', 'grouping', 'fields', 'workspace', 'cards', 'identity'];

/** Rows of one statement as the server's superuser, on `database`. */
async function rowsOf<T>(database: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl!, database) });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * An empty database of its own and, when asked, a login role of its own (or
 * of a given name: the first of `names` no role has yet), with what a
 * server and the CLI need to run on it as that role; `drop` removes both.
 */
async function emptyDatabase(options: { role?: string[]; owner?: boolean; create?: string } = {}) {
  const name = `cardwork_test_${randomBytes(6).toString('hex')}`;
  assertTestDatabase(name);
  let role: string | undefined;
  if (options.role) {
    const taken = new Set((await rowsOf<{ rolname: string }>('postgres', 'SELECT rolname FROM pg_roles')).map((r) => r.rolname));
    role = options.role.find((r) => !taken.has(r));
    if (!role) throw new Error(`every role name is taken: ${options.role.join(', ')}`);
    await adminQuery(serverUrl!, `CREATE ROLE "${role}" LOGIN`);
  }
  await adminQuery(serverUrl!, `CREATE DATABASE "${name}"${role && options.owner !== false ? ` OWNER "${role}"` : ''} ${options.create ?? ''}`);
  const url = new URL(withDatabase(serverUrl!, name));
  if (role) url.username = role;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-dbset-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, DATABASE_URL: url.toString(), LOG_LEVEL: 'warn' };
  return {
    name,
    role,
    env,
    /** `cardwork migrate`: how many it applied, or what it said. */
    migrate(extra: Record<string, string> = {}) {
      const r = runCli(['migrate'], { ...env, ...extra });
      return r.status === 0 ? (JSON.parse(r.stdout) as { applied: number }).applied : `exit ${r.status}: ${r.stderr.trim()}`;
    },
    createUser(username: string) {
      const r = runCli(['user', 'create', '--username', username, '--email', `${username}@example.test`], env);
      if (r.status !== 0) throw new Error(`cardwork user create failed: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { api_key: string }).api_key;
    },
    async drop() {
      await adminQuery(serverUrl!, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      if (role) await adminQuery(serverUrl!, `DROP ROLE IF EXISTS "${role}"`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `work` on an empty database (emptyDatabase), dropped afterwards with its role. */
async function withEmptyDatabase(options: Parameters<typeof emptyDatabase>[0], work: (db: Awaited<ReturnType<typeof emptyDatabase>>) => Promise<void>): Promise<void> {
  const db = await emptyDatabase(options);
  try {
    await work(db);
  } finally {
    await db.drop();
  }
}

/** Starts the built server on `env`, makes a user with the CLI and reads /me with it and /ready: both 200. */
async function serves(env: Record<string, string>, createUser: (username: string) => string): Promise<void> {
  const server = await startServer(env);
  try {
    const apiKey = createUser(`u${randomBytes(4).toString('hex')}`);
    expect((await fetch(`${server.base}/me`, { headers: { 'X-Api-Key': apiKey } })).status).toBe(200);
    expect((await fetch(`${server.base}/ready`)).status).toBe(200);
  } finally {
    await server.stop();
  }
}

/** `npx typeorm migration:show -d dist/ormconfig.js` (the README's way back to an older build) on `env`: its [X] and [ ] lines. */
function typeormMigrations(env: Record<string, string>): { applied: number; pending: number } {
  const root = path.resolve(import.meta.dirname, '../../..');
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typeorm/cli.js'), 'migration:show', '-d', 'dist/ormconfig.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  const out = r.stdout + r.stderr;
  if (r.status !== 0) throw new Error(`typeorm migration:show failed: ${out}`);
  return { applied: out.match(/\[X\]/g)?.length ?? 0, pending: out.match(/\[ \]/g)?.length ?? 0 };
}

/** The schemas holding a table named migrations. */
async function migrationsTables(database: string): Promise<string[]> {
  return (await rowsOf<{ schema: string }>(database, `SELECT schemaname AS schema FROM pg_tables WHERE tablename = 'migrations' ORDER BY 1`)).map((r) => r.schema);
}

describeWithServer('a database with a DBA\'s settings', () => {
  /**
   * Connections pin DateStyle and IntervalStyle: with the database's
   * `datestyle='German'` pg's parser read every timestamp as null (500s on
   * /me, /organizations, /me/api-keys after committing the key; 1970-01-01
   * in card JSON), and `cardwork user create` crashed.
   */
  it("reads timestamps right under datestyle='German' and intervalstyle='sql_standard': the CLI, the API, card JSON", async () => {
    const db = await processDatabase();
    const name = databaseOf(db.env.DATABASE_URL);
    await adminQuery(serverUrl!, `ALTER DATABASE "${name}" SET datestyle = 'German'`);
    await adminQuery(serverUrl!, `ALTER DATABASE "${name}" SET intervalstyle = 'sql_standard'`);
    const server = await startServer(db.env).catch(async (error) => {
      await db.drop();
      throw error;
    });
    try {
      const before = Date.now() - 60_000;
      const { apiKey } = db.createUser('dora');
      const call = async (method: string, route: string, body?: unknown) => {
        const res = await fetch(`${server.base}${route}`, {
          method,
          headers: { 'X-Api-Key': apiKey, ...(body ? { 'Content-Type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> & Array<Record<string, unknown>> };
      };
      const recent = (value: unknown) => typeof value === 'string' && Date.parse(value) > before && Date.parse(value) < Date.now() + 60_000;
      const me = await call('GET', '/me');
      expect(me.status).toBe(200);
      const org = await call('POST', '/organizations', { name: 'Team' });
      expect(org.status).toBe(201);
      const project = await call('POST', `/organizations/${org.body.id}/projects`, { title: 'P' });
      expect(project.status).toBe(201);
      expect(recent(project.body.created_at)).toBe(true);
      const all = await call('GET', '/projects/all');
      expect(all.status).toBe(200);
      const card = await call('POST', `/cards/${project.body.top_level_card_id}/children`, { title: 'C' });
      expect(card.status).toBe(201);
      const read = await call('GET', `/cards/${card.body.id}`);
      expect(read.status).toBe(200);
      expect([recent(read.body.created_at), recent(read.body.updated_at)]).toEqual([true, true]);
      const stream = await call('GET', `/cards/${card.body.id}/stream`);
      expect(stream.status).toBe(200);
      const key = await call('POST', '/me/api-keys', { name: 'laptop' });
      expect(key.status).toBe(201);
      const keys = await call('GET', '/me/api-keys');
      expect(keys.status).toBe(200);
    } finally {
      await server.stop();
      await db.drop();
    }
  }, 120_000);

  /**
   * The migrations table is found whatever the search_path (migrations-table.ts):
   * TypeORM kept it in current_schema(), which the DBA's settings moved.
   */
  describe('search_path', () => {
    it("search_path = '' on the database: `cardwork migrate` applies, then finds none pending; the server starts, again and again", async () => {
      await withEmptyDatabase({}, async (db) => {
        await adminQuery(serverUrl!, `ALTER DATABASE "${db.name}" SET search_path = ''`);
        expect(db.migrate()).toBeGreaterThan(20);
        expect(db.migrate()).toBe(0);
        await serves(db.env, db.createUser);
        await serves({ ...db.env, MIGRATIONS_RUN: 'false' }, db.createUser);
        expect(await migrationsTables(db.name)).toEqual(['public']);
      });
    }, 180_000);

    it('a role named after one of the app\'s schemas, default search_path ("$user", public): the second start and migrate find the migrations applied', async () => {
      await withEmptyDatabase({ role: APP_SCHEMAS }, async (db) => {
        await serves(db.env, db.createUser);
        // The role's schema now exists and comes first in its search_path.
        await serves(db.env, db.createUser);
        expect(db.migrate()).toBe(0);
        await serves({ ...db.env, MIGRATIONS_RUN: 'false' }, db.createUser);
        expect(await migrationsTables(db.name)).toEqual(['public']);
        // The TypeORM CLI (ormconfig.ts) reads the same table: it read the role's empty schema, every migration pending.
        expect(typeormMigrations(db.env)).toEqual({ applied: expect.any(Number), pending: 0 });
        expect(typeormMigrations(db.env).applied).toBeGreaterThan(20);
      });
    }, 180_000);

    it('one schema per role (search_path = "$user"): a deployment with its table in that schema keeps it, MIGRATIONS_RUN=false serves', async () => {
      await withEmptyDatabase({ role: [`cardwork_test_u_${randomBytes(4).toString('hex')}`] }, async (db) => {
        await adminQuery(serverUrl!, `ALTER ROLE "${db.role}" SET search_path = "$user"`);
        await adminQuery(withDatabase(serverUrl!, db.name), `CREATE SCHEMA "${db.role}" AUTHORIZATION "${db.role}"`);
        expect(db.migrate()).toBeGreaterThan(20);
        // Where the previous builds put it (TypeORM's current_schema()).
        await adminQuery(withDatabase(serverUrl!, db.name), `ALTER TABLE public.migrations SET SCHEMA "${db.role}"`);
        await serves({ ...db.env, MIGRATIONS_RUN: 'false' }, db.createUser);
        expect(db.migrate()).toBe(0);
        await serves(db.env, db.createUser);
        expect(await migrationsTables(db.name)).toEqual([db.role]);
      });
    }, 180_000);

    it("one schema per role: a public.migrations without the app's migrations (the TypeORM CLI run as the superuser, another app's) does not take the deployment away from its own table", async () => {
      await withEmptyDatabase({ role: [`cardwork_test_u_${randomBytes(4).toString('hex')}`] }, async (db) => {
        await adminQuery(serverUrl!, `ALTER ROLE "${db.role}" SET search_path = "$user"`);
        await adminQuery(withDatabase(serverUrl!, db.name), `CREATE SCHEMA "${db.role}" AUTHORIZATION "${db.role}"`);
        expect(db.migrate()).toBeGreaterThan(20);
        await adminQuery(withDatabase(serverUrl!, db.name), `ALTER TABLE public.migrations SET SCHEMA "${db.role}"`);
        // The DBA looks with the TypeORM CLI as the superuser: it finds the role's table, and makes no public one.
        const asSuperuser = { ...db.env, DATABASE_URL: withDatabase(serverUrl!, db.name) };
        expect(typeormMigrations(asSuperuser).pending).toBe(0);
        expect(await migrationsTables(db.name)).toEqual([db.role]);
        // Another app's table in public, one row, readable by the role: the start and migrate still use the role's.
        await adminQuery(
          withDatabase(serverUrl!, db.name),
          `CREATE TABLE public.migrations (id serial PRIMARY KEY, "timestamp" bigint NOT NULL, name varchar NOT NULL);
           INSERT INTO public.migrations ("timestamp", name) VALUES (1600000000000, 'OtherAppInit1600000000000');
           GRANT SELECT ON public.migrations TO "${db.role}"`,
        );
        expect(db.migrate()).toBe(0);
        await serves({ ...db.env, MIGRATIONS_RUN: 'false' }, db.createUser);
        await serves(db.env, db.createUser);
      });
    }, 180_000);

    it('one schema per role, fresh, the role without CREATE on public: the table goes in its own schema, and is found there', async () => {
      await withEmptyDatabase({ role: [`cardwork_test_u_${randomBytes(4).toString('hex')}`], owner: false }, async (db) => {
        await adminQuery(serverUrl!, `ALTER ROLE "${db.role}" SET search_path = "$user"`);
        await adminQuery(serverUrl!, `GRANT CREATE ON DATABASE "${db.name}" TO "${db.role}"`);
        await adminQuery(withDatabase(serverUrl!, db.name), `CREATE SCHEMA "${db.role}" AUTHORIZATION "${db.role}"`);
        expect(db.migrate()).toBeGreaterThan(20);
        expect(db.migrate()).toBe(0);
        await serves({ ...db.env, MIGRATIONS_RUN: 'false' }, db.createUser);
        expect(await migrationsTables(db.name)).toEqual([db.role]);
      });
    }, 180_000);
  });

  describe('encoding and locale', () => {
    it('refuses a fresh database not encoded in UTF8, the start and `cardwork migrate`, in one line saying what to do, before writing', async () => {
      await withEmptyDatabase({ create: `ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` }, async (db) => {
        const refused = await runToExit({ ...db.env, PORT: String(await freePort()) });
        expect(refused.code).toBe(1);
        expect(refused.output.trim().split('\n')).toEqual([
          expect.stringMatching(/^cardwork failed to start: the database "cardwork_test_\w+" is encoded LATIN1, not UTF8, .*ENCODING 'UTF8'/),
        ]);
        expect(db.migrate()).toMatch(/^exit 1: cardwork: the database "cardwork_test_\w+" is encoded LATIN1, not UTF8/);
        expect(await migrationsTables(db.name)).toEqual([]);
      });
    }, 120_000);

    /** Starts the built server on `env`, waits for its `warn` line holding `marker`, stops it: that line's message. */
    const warningAt = async (env: Record<string, string>, marker: string): Promise<string> => {
      const server = await startServer(env);
      try {
        const warned = () => server.output().split('\n').filter((l) => l.includes(marker));
        for (let i = 0; i < 50 && !warned().length; i++) await new Promise((r) => setTimeout(r, 100));
        expect(warned()).toHaveLength(1);
        return (JSON.parse(warned()[0]) as { level: number; msg: string }).msg;
      } finally {
        await server.stop();
      }
    };

    it("serves a fresh SQL_ASCII database (initdb's default under a C locale: it keeps UTF-8 bytes as they are), with a warn line", async () => {
      await withEmptyDatabase({ create: `ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` }, async (db) => {
        expect(db.migrate()).toBeGreaterThan(20);
        expect(await warningAt(db.env, 'SQL_ASCII')).toMatch(/encoded SQL_ASCII: .*ENCODING 'UTF8'/);
        await serves(db.env, db.createUser);
      });
    }, 120_000);

    it('serves a LATIN1 database that already holds its data (an upgrade must not lock it out), with a warn line saying what it refuses', async () => {
      await withEmptyDatabase({}, async (source) => {
        expect(source.migrate()).toBeGreaterThan(20);
        source.createUser('latinuser');
        await withEmptyDatabase({ create: `ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` }, async (db) => {
          // The data as a build before the encoding check left it: restored from a dump (which converts).
          const dump = spawnSync('pg_dump', ['--no-owner', '--no-privileges', '-d', withDatabase(serverUrl!, source.name)], { encoding: 'utf8', maxBuffer: 64 << 20 });
          expect(dump.status).toBe(0);
          const restore = spawnSync('psql', ['-q', '-v', 'ON_ERROR_STOP=1', '-d', withDatabase(serverUrl!, db.name)], { input: dump.stdout, encoding: 'utf8' });
          expect(restore.stderr).toBe('');
          expect(await warningAt(db.env, 'encoded LATIN1')).toMatch(/not UTF8: .*\(CJK, emoji\) is refused with a 400/);
          expect(db.migrate()).toBe(0);
          await serves(db.env, db.createUser);
        });
      });
    }, 180_000);

    it("warns in one line at start when LC_CTYPE folds ASCII letters only (C), saying what is affected and how to create the database", async () => {
      await withEmptyDatabase({ create: `ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` }, async (db) => {
        const server = await startServer(db.env);
        try {
          const warned = () => server.output().split('\n').filter((l) => l.includes('LC_CTYPE'));
          for (let i = 0; i < 50 && !warned().length; i++) await new Promise((r) => setTimeout(r, 100));
          expect(warned()).toHaveLength(1);
          expect(JSON.parse(warned()[0])).toMatchObject({ level: 40, msg: expect.stringMatching(/LC_CTYPE \(C\) .*non-ASCII.*C\.UTF-8.*ICU/) });
        } finally {
          await server.stop();
        }
      });
      // A database whose LC_CTYPE folds them says nothing of it.
      await withEmptyDatabase({}, async (db) => {
        const server = await startServer(db.env);
        await server.stop();
        expect(server.output()).not.toContain('LC_CTYPE');
      });
    }, 120_000);
  });

  describe('pg_trgm', () => {
    const indexOf = async (database: string) =>
      (await rowsOf<{ def: string }>(database, `SELECT pg_get_indexdef(to_regclass('cards.cards_title_trgm_idx')) AS def WHERE to_regclass('cards.cards_title_trgm_idx') IS NOT NULL`)).map((r) => r.def);

    it('builds the title index with pg_trgm installed in a schema of its own (as managed services do), its operator class qualified', async () => {
      await withEmptyDatabase({}, async (db) => {
        await adminQuery(withDatabase(serverUrl!, db.name), 'CREATE SCHEMA extensions; CREATE EXTENSION pg_trgm SCHEMA extensions');
        expect(db.migrate()).toBeGreaterThan(20);
        expect(await indexOf(db.name)).toEqual([expect.stringContaining('USING gin (title extensions.gin_trgm_ops)')]);
        const server = await startServer(db.env);
        await server.stop();
        expect(server.output()).not.toContain('cards_title_trgm_idx');
      });
    }, 120_000);

    it("migrates without the index when the app's role may not use pg_trgm's schema (no USAGE granted), and warns", async () => {
      await withEmptyDatabase({ role: [`cardwork_test_u_${randomBytes(4).toString('hex')}`] }, async (db) => {
        await adminQuery(withDatabase(serverUrl!, db.name), 'CREATE SCHEMA ext; CREATE EXTENSION pg_trgm SCHEMA ext');
        // It was an error at every start: permission denied for schema ext.
        expect(db.migrate()).toBeGreaterThan(20);
        expect(await indexOf(db.name)).toEqual([]);
        const server = await startServer(db.env);
        await server.stop();
        expect(server.output()).toContain('cards_title_trgm_idx is missing');
      });
    }, 120_000);

    it('warns in one line at start while the title index is missing', async () => {
      await withEmptyDatabase({}, async (db) => {
        expect(db.migrate()).toBeGreaterThan(20);
        await adminQuery(withDatabase(serverUrl!, db.name), 'DROP INDEX cards.cards_title_trgm_idx');
        const server = await startServer(db.env);
        try {
          const warned = () => server.output().split('\n').filter((l) => l.includes('cards_title_trgm_idx is missing'));
          for (let i = 0; i < 50 && !warned().length; i++) await new Promise((r) => setTimeout(r, 100));
          expect(warned()).toHaveLength(1);
          expect(JSON.parse(warned()[0])).toMatchObject({ level: 40, msg: expect.stringContaining('title search scans') });
        } finally {
          await server.stop();
        }
      });
    }, 120_000);
  });

  describe('a start that cannot apply the migrations', () => {
    /** The start's refusal, and `cardwork migrate`'s: one line each, the same words after their prefix. */
    async function refusedBoth(env: Record<string, string>, says: RegExp, migrate: () => number | string): Promise<void> {
      const refused = await runToExit({ ...env, PORT: String(await freePort()) });
      expect(refused.code).toBe(1);
      expect(refused.output.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^cardwork failed to start: ${says.source}`))]);
      expect(migrate()).toMatch(new RegExp(`^exit 1: cardwork: ${says.source}`));
    }

    it('refuses a fresh database whose sessions are read-only (default_transaction_read_only = on) in one line saying what to do', async () => {
      await withEmptyDatabase({}, async (db) => {
        await adminQuery(serverUrl!, `ALTER DATABASE "${db.name}" SET default_transaction_read_only = on`);
        await refusedBoth(db.env, /\d+ migration\(s\) to apply and the session is read-only \(default_transaction_read_only = on\): ALTER DATABASE "cardwork_test_\w+" SET default_transaction_read_only = off/, () => db.migrate());
        // With nothing to apply it serves, and /ready says why it cannot write (as before).
        await adminQuery(serverUrl!, `ALTER DATABASE "${db.name}" RESET default_transaction_read_only`);
        expect(db.migrate()).toBeGreaterThan(20);
        await adminQuery(serverUrl!, `ALTER DATABASE "${db.name}" SET default_transaction_read_only = on`);
        const server = await startServer(db.env);
        try {
          expect((await fetch(`${server.base}/ready`)).status).toBe(503);
        } finally {
          await server.stop();
        }
      });
    }, 120_000);

    it('refuses a fresh database its role may not create schemas in, in one line naming the GRANT', async () => {
      await withEmptyDatabase({ role: [`cardwork_test_u_${randomBytes(4).toString('hex')}`], owner: false }, async (db) => {
        await refusedBoth(db.env, /\d+ migration\(s\) to apply and role "cardwork_test_u_\w+" may not create schemas in database "cardwork_test_\w+": GRANT CREATE ON DATABASE/, () => db.migrate());
        expect(await migrationsTables(db.name)).toEqual([]);
      });
    }, 120_000);
  });
});
