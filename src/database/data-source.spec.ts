import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { PreparingClient } from '../shared/persistence/prepared-statements.js';
import { dataSourceOptions } from './data-source.js';
import { poolTypes } from './type-parsers.js';

const SERVER = 'postgres://u@localhost/db';
const clientOf = (env: Record<string, string>) =>
  (dataSourceOptions(loadConfig({ DATABASE_URL: SERVER, ...env })) as { extra?: { Client?: unknown } }).extra?.Client;

describe('dataSourceOptions on a PostgreSQL server', () => {
  it('names the marked statements by default (the pool uses PreparingClient)', () => {
    expect(clientOf({})).toBe(PreparingClient);
  });

  it('sends every statement unnamed with DATABASE_PREPARED_STATEMENTS=false (poolers in transaction mode)', () => {
    expect(clientOf({ DATABASE_PREPARED_STATEMENTS: 'false' })).toBeUndefined();
  });

  it('reads timestamptz with the fast parser (poolTypes)', () => {
    const options = dataSourceOptions(loadConfig({ DATABASE_URL: SERVER })) as { extra?: { types?: unknown } };
    expect(options.extra?.types).toBe(poolTypes);
  });

  it('refuses a value that is not a boolean', () => {
    expect(() => loadConfig({ DATABASE_URL: SERVER, DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(ConfigError);
  });
});
