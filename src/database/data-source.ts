import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { poolTypes } from './type-parsers.js';
import { PreparingClient } from '../shared/persistence/prepared-statements.js';
import { cancellingClient } from '../shared/persistence/request-cancellation.js';
import { embeddedDriver } from './embedded-driver.js';
import { QueryLogger } from './query-logger.js';
import { answerDeadlineClient, answerDeadlineMs, requestsDriver } from './server-pool.js';
import { SnakeNamingStrategy } from './snake-naming.strategy.js';

export const EMBEDDED_MEMORY = 'memory://';

/** The pool's connection classes: a request's statements stop when its client goes away; marked ones go out named. */
const NAMING_POOL_CLIENT = cancellingClient(PreparingClient);
const PLAIN_POOL_CLIENT = cancellingClient(pg.Client);

/** Seconds of silence before a keepalive probe, between probes, and probes unanswered before a peer is dead: about 2 minutes in all. */
const KEEPALIVE_IDLE_S = 60;
const KEEPALIVE_INTERVAL_S = 10;
const KEEPALIVE_COUNT = 6;

/**
 * What bounds a session whose app stopped talking to it (docs/RELIABILITY.md,
 * "A frozen instance lets go of its locks"), on both uses' connections.
 * `idle_in_transaction_session_timeout` = DATABASE_STATEMENT_TIMEOUT_MS (0
 * keeps the server's setting): PostgreSQL ends a session idle inside a
 * transaction that long, rolling it back and freeing its locks. A process
 * frozen (SIGSTOP, a paused VM) or cut off mid-transaction held its row
 * locks for as long as TCP took to notice, over two hours; a frozen
 * process's kernel even answers keepalives, so only this timeout frees them
 * then. No path of the app waits inside a transaction on anything but the
 * database for more than moments (file downloads and request bodies come
 * before it; writing an uploaded file to DATA_DIR/files, at most
 * MAX_UPLOAD_BYTES, is the longest: docs/RELIABILITY.md). The server's keepalives (`tcp_keepalives_*`) find a client
 * whose host died or went behind a partition in about 2 minutes, for a
 * session outside a transaction too (the migrations' advisory lock);
 * PostgreSQL ignores them on a Unix socket.
 */
function sessionBounds(config: AppConfig): string {
  const idle = config.databaseStatementTimeoutMs ? ` -c idle_in_transaction_session_timeout=${config.databaseStatementTimeoutMs}` : '';
  return `${idle} -c tcp_keepalives_idle=${KEEPALIVE_IDLE_S} -c tcp_keepalives_interval=${KEEPALIVE_INTERVAL_S} -c tcp_keepalives_count=${KEEPALIVE_COUNT}`;
}

/**
 * How the session writes dates, times and intervals as text, pinned whatever
 * the database's or role's settings (ALTER DATABASE … SET datestyle =
 * 'German', 'SQL, DMY', intervalstyle = 'sql_standard'): the pool's parsers
 * (type-parsers.ts, pg's own) read only the ISO style, and `::text` in SQL
 * and JSON built by the database assume it too. With another DateStyle every
 * timestamp read as null: 500s on /me or /organizations, 1970-01-01 in card
 * JSON, `cardwork user create` crashed. MDY only says how an ambiguous date
 * written as text is read (the app writes none: ISO 8601 is read the same
 * in any order).
 */
const READ_AS_WRITTEN = ' -c DateStyle=ISO,\\ MDY -c IntervalStyle=postgres';

/**
 * What a data source's connections are for. `requests`: the app's pool, whose
 * statements are bound by DATABASE_STATEMENT_TIMEOUT_MS. `migrations`: one
 * connection without that bound (an upgrade may build an index for minutes),
 * used by `applyMigrations` (the server's start, `cardwork migrate`),
 * ormconfig.ts and the tests' template.
 */
export type ConnectionUse = 'requests' | 'migrations';

/**
 * One definition of the connection for the app, the CLI and ormconfig.ts.
 * No DATABASE_URL → PGlite under DATA_DIR/db (or in memory for tests).
 */
export function dataSourceOptions(config: AppConfig, embeddedDir?: string, use: ConnectionUse = 'requests'): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    synchronize: false,
    migrations: MIGRATIONS,
    // On a server the app applies pending migrations before its pool opens, on a
    // connection of their own (applyMigrations). The embedded database has one
    // connection and no statement timeout: its data source applies them itself.
    migrationsRun: config.embedded && config.migrationsRun,
    migrationsTransactionMode: 'each' as const,
    namingStrategy: new SnakeNamingStrategy(),
    // Failed statements are logged, as JSON lines through the app's logger
    // (QueryLogger), unless logs are off (LOG_LEVEL=silent, as in tests).
    logging: config.logLevel === 'silent' ? (false as const) : ['error' as const],
    logger: new QueryLogger(),
  };
  if (!config.embedded) {
    // Transactions run at the session's default level (UnitOfWork sends no SET
    // TRANSACTION): pin it to READ COMMITTED, whatever the server's setting.
    // A request's statement that runs past DATABASE_STATEMENT_TIMEOUT_MS
    // (waiting for a lock included) is cancelled by PostgreSQL (57014), so a
    // runaway no longer holds a pooled connection and a core after its client
    // gave up (docs/RELIABILITY.md, "Statements are bounded in time").
    // Migrations say 0 (none) whatever the role's or database's own setting;
    // requests with DATABASE_STATEMENT_TIMEOUT_MS=0 keep the server's.
    const timeout = use === 'migrations' ? 0 : config.databaseStatementTimeoutMs || undefined;
    const options = `-c default_transaction_isolation=read\\ committed${timeout === undefined ? '' : ` -c statement_timeout=${timeout}`}${READ_AS_WRITTEN}${sessionBounds(config)}`;
    // Statements marked `prepared(…)` go out named: parsed and planned once per
    // connection. A request's statements stop when its client goes away.
    const client = config.preparedStatements ? NAMING_POOL_CLIENT : PLAIN_POOL_CLIENT;
    return {
      ...common,
      url: config.databaseUrl,
      parseInt8: true,
      // The requests' pool tells an outage and a busy pool apart, and a request's
      // connection gives up on a statement never answered (server-pool.ts);
      // migrations keep pg's own pool and wait as long as they take.
      ...(use === 'requests' ? { driver: requestsDriver } : {}),
      // A connection attempt to an unreachable database fails after 5 s, so a
      // request gets its 503 instead of waiting (DESIGN.md §10).
      extra: {
        max: use === 'requests' ? 20 : 1,
        connectionTimeoutMillis: 5000,
        // Our side of the keepalives: a connection waiting on a PostgreSQL host
        // that died or went behind a partition (the migrations' lock wait has no
        // other deadline) errors within minutes, not the OS's two hours.
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE_IDLE_S * 1000,
        options,
        types: poolTypes,
        Client: use === 'requests' ? answerDeadlineClient(client, answerDeadlineMs(config.databaseStatementTimeoutMs)) : client,
      },
    };
  }
  const dir = embeddedDir ?? embeddedDataDir(config);
  if (dir !== EMBEDDED_MEMORY) fs.mkdirSync(dir, { recursive: true });
  return { ...common, driver: embeddedDriver(dir === EMBEDDED_MEMORY ? undefined : dir) };
}

/** Where the embedded database lives: DATA_DIR/db. */
export function embeddedDataDir(config: AppConfig): string {
  return path.join(config.dataDir, 'db');
}
