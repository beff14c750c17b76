import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { PreparingClient } from '../shared/persistence/prepared-statements.js';
import { dataSourceOptions, type ConnectionUse } from './data-source.js';
import { RequestsPool } from './server-pool.js';
import { poolTypes } from './type-parsers.js';

const SERVER = 'postgres://u@localhost/db';
const clientOf = (env: Record<string, string>, use?: ConnectionUse) =>
  (dataSourceOptions(loadConfig({ DATABASE_URL: SERVER, ...env }), undefined, use) as { extra?: { Client?: unknown } }).extra?.Client;
/** The classes a client class derives from, nearest first, by name. */
const lineage = (Client: unknown): string[] => {
  const names: string[] = [];
  for (let c = Client as { name: string } | null; c && c.name; c = Object.getPrototypeOf(c)) names.push(c.name);
  return names;
};

describe('dataSourceOptions on a PostgreSQL server', () => {
  it('names the marked statements by default (the pool\'s client derives from PreparingClient)', () => {
    expect(Object.getPrototypeOf(clientOf({}, 'migrations'))).toBe(PreparingClient);
    expect(Object.getPrototypeOf(Object.getPrototypeOf(clientOf({})))).toBe(PreparingClient);
  });

  it('sends every statement unnamed with DATABASE_PREPARED_STATEMENTS=false (poolers in transaction mode)', () => {
    expect(Object.getPrototypeOf(clientOf({ DATABASE_PREPARED_STATEMENTS: 'false' }, 'migrations'))).toBe(pg.Client);
  });

  it('uses a client that cancels a request\'s statements when its client goes away, either way; the requests\' gives up on a statement never answered', () => {
    for (const env of [{}, { DATABASE_PREPARED_STATEMENTS: 'false' }] as Array<Record<string, string>>) {
      expect(lineage(clientOf(env)).slice(0, 2)).toEqual(['AnswerDeadlineClient', 'CancellingClient']);
      expect(lineage(clientOf(env, 'migrations'))[0]).toBe('CancellingClient');
    }
  });

  it('opens the requests\' connections through RequestsPool, the migrations\' through pg\'s own pool', () => {
    const driverOf = (use: ConnectionUse) => (dataSourceOptions(loadConfig({ DATABASE_URL: SERVER }), undefined, use) as { driver?: { Pool?: unknown } }).driver;
    expect(driverOf('requests')?.Pool).toBe(RequestsPool);
    expect(driverOf('migrations')).toBeUndefined();
  });

  it('reads timestamptz with the fast parser (poolTypes)', () => {
    const options = dataSourceOptions(loadConfig({ DATABASE_URL: SERVER })) as { extra?: { types?: unknown } };
    expect(options.extra?.types).toBe(poolTypes);
  });

  it('refuses a value that is not a boolean', () => {
    expect(() => loadConfig({ DATABASE_URL: SERVER, DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(ConfigError);
  });

  describe('statement timeout (DATABASE_STATEMENT_TIMEOUT_MS)', () => {
    const KEEPALIVES = ' -c tcp_keepalives_idle=60 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=6';
    const STYLES = ' -c DateStyle=ISO,\\ MDY -c IntervalStyle=postgres';
    const extraOf = (env: Record<string, string>, use?: ConnectionUse) =>
      (dataSourceOptions(loadConfig({ DATABASE_URL: SERVER, ...env }), undefined, use) as { extra: { options: string; max: number; keepAlive: boolean; keepAliveInitialDelayMillis: number } }).extra;

    it('bounds the requests\' statements, 60 s by default', () => {
      expect(extraOf({}).options).toBe(
        '-c default_transaction_isolation=read\\ committed -c statement_timeout=60000' + STYLES + ' -c idle_in_transaction_session_timeout=60000' + KEEPALIVES,
      );
      expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '1500' }).options).toContain('-c statement_timeout=1500');
    });

    it('pins how dates and intervals are written, on both uses, whatever the database\'s or role\'s DateStyle', () => {
      for (const use of ['requests', 'migrations'] as const) {
        for (const timeout of ['0', '1500']) expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: timeout }, use).options).toContain(STYLES);
      }
    });

    it('leaves the server\'s own setting with 0', () => {
      expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).options).not.toContain('statement_timeout');
      expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }).options).not.toContain('idle_in_transaction_session_timeout');
      expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '0' }, 'migrations').options).not.toContain('idle_in_transaction_session_timeout');
    });

    it('ends a session idle in a transaction after the same time, on both uses, and has the server probe idle clients', () => {
      expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '1500' }).options).toContain('-c idle_in_transaction_session_timeout=1500 ' + KEEPALIVES.trim());
      expect(extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '1500' }, 'migrations').options).toContain('-c idle_in_transaction_session_timeout=1500 ' + KEEPALIVES.trim());
      for (const use of ['requests', 'migrations'] as const) {
        expect(extraOf({}, use)).toMatchObject({ keepAlive: true, keepAliveInitialDelayMillis: 60_000 });
      }
    });

    it('runs migrations on one connection without a timeout, whatever the server\'s setting', () => {
      const extra = extraOf({ DATABASE_STATEMENT_TIMEOUT_MS: '1500' }, 'migrations');
      expect(extra.options).toBe('-c default_transaction_isolation=read\\ committed -c statement_timeout=0' + STYLES + ' -c idle_in_transaction_session_timeout=1500' + KEEPALIVES);
      expect(extra.max).toBe(1);
    });

    it('leaves pending migrations to applyMigrations: the requests\' data source does not run them', () => {
      expect(dataSourceOptions(loadConfig({ DATABASE_URL: SERVER })).migrationsRun).toBe(false);
    });

    it('refuses a value that is not a whole number of milliseconds', () => {
      for (const bad of ['-1', '1.5', '30s', '2147483648']) {
        expect(() => loadConfig({ DATABASE_URL: SERVER, DATABASE_STATEMENT_TIMEOUT_MS: bad })).toThrow(ConfigError);
      }
    });
  });
});
