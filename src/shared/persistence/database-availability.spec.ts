import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import {
  commitOutcomeUnknown,
  connectionNotOpened,
  DATABASE_TROUBLE_DETAIL,
  databaseTrouble,
  isDatabaseUnavailable,
  keepSessionEnd,
  PoolBusyError,
  SessionEndedError,
  sessionEndOf,
} from './database-availability.js';

const pgError = (code: string, message = 'error') => Object.assign(new Error(message), { code });
/** TypeORM's QueryFailedError keeps the driver's error as driverError. */
const failed = (driverError: unknown) => Object.assign(new Error('query failed'), { driverError });

describe('databaseTrouble', () => {
  it.each([
    ['25006', 'read-only'],
    ['53100', 'out-of-resources'],
    ['53200', 'out-of-resources'],
    ['53300', 'out-of-resources'],
    ['08006', 'unreachable'],
    ['57P01', 'unreachable'],
    ['57P03', 'unreachable'],
    // PostgreSQL ended a session idle in a transaction (idle_in_transaction_session_timeout) or idle (idle_session_timeout).
    ['25P03', 'unreachable'],
    ['57P05', 'unreachable'],
  ])('SQLSTATE %s is %s', (code, trouble) => {
    expect(databaseTrouble(failed(pgError(code)))).toBe(trouble);
  });

  it('is none for a statement that is wrong, or a lock or timeout', () => {
    for (const code of ['42601', '23505', '22P02', '57014', '55P03', '55000', '3D000', '28P01']) expect(databaseTrouble(pgError(code))).toBeUndefined();
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
  });

  it('is unreachable for any error the requests\' pool met opening a connection, whatever it says', () => {
    for (const code of ['55000', '3D000', '28P01', '28000']) {
      expect(databaseTrouble(failed(connectionNotOpened(pgError(code, 'database "x" is not currently accepting connections'))))).toBe('unreachable');
    }
  });

  it('is busy for a pool whose every connection is lent, and says so', () => {
    expect(databaseTrouble(new PoolBusyError(5000, new Error('timeout exceeded when trying to connect')))).toBe('busy');
    expect(DATABASE_TROUBLE_DETAIL.busy).toMatch(/connections are busy/);
    // Without the pool's word, the same timeout is a database not reachable.
    expect(databaseTrouble(new Error('timeout exceeded when trying to connect'))).toBe('unreachable');
  });
});

describe('commitOutcomeUnknown', () => {
  it('is unknown when the COMMIT got no answer, or the session ended while committing', () => {
    for (const error of [
      failed(new Error('Connection terminated unexpectedly')),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
      failed(pgError('57P01')),
      failed(pgError('08006')),
      failed(pgError('XX000')),
    ]) {
      expect(commitOutcomeUnknown(error)).toBe(true);
    }
  });

  it('is known (rolled back) when PostgreSQL answered the COMMIT with an error', () => {
    for (const code of ['23505', '23503', '40001', '40P01', '25P02']) expect(commitOutcomeUnknown(failed(pgError(code)))).toBe(false);
  });

  it('is known (rolled back) when the session had ended idle in the transaction: the COMMIT was refused by it, or never sent', () => {
    expect(commitOutcomeUnknown(failed(pgError('25P03', 'terminating connection due to idle-in-transaction timeout')))).toBe(false);
    const ended = new SessionEndedError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(commitOutcomeUnknown(ended)).toBe(false);
    expect(databaseTrouble(ended)).toBe('unreachable');
  });
});

describe('keepSessionEnd', () => {
  it('keeps the first error that ended a connection, for the transaction\'s next statement to say', () => {
    const client = new EventEmitter();
    keepSessionEnd(client);
    expect(sessionEndOf(client)).toBeUndefined();
    const fatal = pgError('25P03', 'terminating connection due to idle-in-transaction timeout');
    client.emit('error', fatal);
    client.emit('error', new Error('Connection terminated unexpectedly'));
    expect(sessionEndOf(client)).toBe(fatal);
    expect(sessionEndOf(undefined)).toBeUndefined();
  });
});
