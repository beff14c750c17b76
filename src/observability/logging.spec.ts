import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { pino, type Logger } from 'pino';
import { createRootLogger, LOG_FLUSH_MS, PinoNestLogger, redactQuery } from './logging.js';

describe('createRootLogger', () => {
  let file: string;
  let fd: number;
  let logger: Logger;
  const written = () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string; level: number });

  beforeEach(() => {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cardwork-log-')), 'out.log');
    fd = fs.openSync(file, 'w');
  });
  // Ending the destination stops its flush timer and closes the file.
  afterEach(async () => {
    const destination = (logger as unknown as Record<symbol, NodeJS.WritableStream>)[pino.symbols.streamSym];
    await new Promise((resolve) => destination.once('close', resolve).end());
  });

  it('holds request lines back a moment and writes them together, at the latest after LOG_FLUSH_MS', async () => {
    logger = createRootLogger('info', fd);
    for (let i = 0; i < 3; i++) logger.info({ n: i }, `request ${i}`);
    await delay(LOG_FLUSH_MS / 5);
    expect(written()).toEqual([]);
    await delay(LOG_FLUSH_MS * 2);
    expect(written().map((l) => l.msg)).toEqual(['request 0', 'request 1', 'request 2']);
  });

  it('writes the server’s own messages at once, with the lines waiting before them', async () => {
    logger = createRootLogger('info', fd);
    logger.info('a request');
    new PinoNestLogger(logger).error(new Error('database unreachable'), 'Bootstrap');
    await delay(LOG_FLUSH_MS / 5);
    expect(written().map((l) => l.msg)).toEqual(['a request', 'database unreachable']);
  });
});

describe('redactQuery', () => {
  it('replaces the values of parameters named like a credential, whatever their case or escaping', () => {
    expect(redactQuery('/oauth/token?client_secret=cws_X&refresh_token=cwr_Y&grant_type=refresh_token')).toBe(
      '/oauth/token?client_secret=[redacted]&refresh_token=[redacted]&grant_type=refresh_token',
    );
    expect(redactQuery('/login?PASSWORD=hunter2&username=ann')).toBe('/login?PASSWORD=[redacted]&username=ann');
    expect(redactQuery('/x?api%5Fkey=abc&ApiKey=d&key=e&code=f&code_verifier=g&access_token=h&new_password=i')).toBe(
      '/x?api%5Fkey=[redacted]&ApiKey=[redacted]&key=[redacted]&code=[redacted]&code_verifier=[redacted]&access_token=[redacted]&new_password=[redacted]',
    );
  });

  it('replaces one of the service’s own credentials under any name, and a value whose name does not decode', () => {
    expect(redactQuery('/api/1.0/me?q=cwk_abc&cwk_def&n%ZZ=1&page=2')).toBe('/api/1.0/me?q=[redacted]&[redacted]&n%ZZ=[redacted]&page=2');
    // framed names and an escaped credential: api_key[], api_key%00, api_key%20, cwk%5F…
    expect(redactQuery('/x?api_key[]=s1&api_key%00=s2&api_key%20=s3&q=cwk%5Fabc&keyboard=qwerty')).toBe(
      '/x?api_key[]=[redacted]&api_key%00=[redacted]&api_key%20=[redacted]&q=[redacted]&keyboard=qwerty',
    );
  });

  it('keeps every other URL as sent', () => {
    for (const url of ['/api/1.0/me', '/api/1.0/cards?filter=state%3Ddone&page=2&per_page=10', '/a?flag&x=', '/a?'])
      expect(redactQuery(url)).toBe(url);
  });
});
