import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import { SpreadsheetTooLargeError, UnreadableSpreadsheetError } from '../domain/import.errors.js';
import { prototypePollutionXlsx, sheetFile } from '../../../../test/support/spreadsheets.js';
import type { SheetRow } from './row-store.js';
import { SheetSandbox } from './sheet-sandbox.js';

// A generous timeout: loading SheetJS in a fresh worker takes seconds on a busy machine.
const limits = { maxRows: 1000, maxColumns: 50, parseTimeoutMs: 30_000, workerHeapMb: 64, parallelParses: 2 };
const fixture = (name: string) => fileURLToPath(new URL(`../../../../test/fixtures/import/${name}`, import.meta.url));

async function parse(bytes: Buffer, sandbox = new SheetSandbox(limits)): Promise<SheetRow[]> {
  const rows: SheetRow[] = [];
  await sandbox.parse(bytes, (batch) => rows.push(...batch));
  return rows;
}

describe('SheetSandbox', () => {
  it('posts back plain string rows, dates as calendar dates', async () => {
    const file = sheetFile([['Title', 'Due', 'Done', 'N'], ['a', new Date(Date.UTC(2026, 0, 31)), true, 2.5], [], ['b']], 'xlsx');
    expect(await parse(file)).toEqual([['Title', 'Due', 'Done', 'N'], ['a', '2026-01-31', 'true', '2.5'], [], ['b']]);
  });

  it('refuses a sheet over the row or column cap without posting rows', async () => {
    const small = { ...limits, maxRows: 2 };
    await expect(parse(sheetFile([['a'], ['b'], ['c']], 'ods'), new SheetSandbox(small))).rejects.toThrow(/IMPORT_MAX_ROWS/);
    const narrow = { ...limits, maxColumns: 2 };
    await expect(parse(sheetFile([['a', 'b', 'c']], 'xlsx'), new SheetSandbox(narrow))).rejects.toThrow(/IMPORT_MAX_COLUMNS/);
  });

  it('the CVE-2023-30533 file really pollutes an unguarded SheetJS', async () => {
    // In a throw-away worker, so the test process itself stays clean.
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      require(workerData.xlsx).read(workerData.file, { type: 'buffer' });
      parentPort.postMessage(typeof Object.prototype.c);`;
    const xlsx = createRequire(import.meta.url).resolve('xlsx');
    const worker = new Worker(source, { eval: true, workerData: { file: prototypePollutionXlsx(), xlsx } });
    const seen = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    await worker.terminate();
    expect(seen).toBe('object');
  });

  it('keeps a polluting parser away from the server isolate', async () => {
    const sandbox = new SheetSandbox(limits, fixture('polluting-parser.cjs'));
    await expect(parse(sheetFile([['a']], 'xlsx'), sandbox)).rejects.toThrow(UnreadableSpreadsheetError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('terminates a parser that never returns at the wall-clock timeout', async () => {
    const started = Date.now();
    const sandbox = new SheetSandbox({ ...limits, parseTimeoutMs: 500 }, fixture('spinning-parser.cjs'));
    await expect(parse(Buffer.from('x'), sandbox)).rejects.toThrow(/longer than 500 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('stops a parser at its heap cap', async () => {
    const sandbox = new SheetSandbox({ ...limits, parseTimeoutMs: 20_000 }, fixture('hungry-parser.cjs'));
    const error = await parse(Buffer.from('x'), sandbox).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpreadsheetTooLargeError);
    expect((error as Error).message).toMatch(/IMPORT_WORKER_HEAP_MB/);
  });

  it('lets only `parallelParses` workers run at once', async () => {
    const sandbox = new SheetSandbox({ ...limits, parallelParses: 1, parseTimeoutMs: 400 }, fixture('spinning-parser.cjs'));
    const started = Date.now();
    const results = await Promise.allSettled([parse(Buffer.from('x'), sandbox), parse(Buffer.from('x'), sandbox)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });
});
