import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { pino, type Logger } from 'pino';
import { createRootLogger, LOG_FLUSH_MS, PinoNestLogger } from './logging.js';

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
