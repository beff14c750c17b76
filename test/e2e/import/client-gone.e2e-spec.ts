import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sheetFile, type Cell } from '../../support/spreadsheets.js';
import { DISCOVER, importWorld } from '../../support/import-client.js';
import { multipartBody } from '../../support/held-uploads.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';

// An upload whose client leaves while its spreadsheet is parsed stops the
// parse (docs/RELIABILITY.md, "A request whose client left stops its work"):
// with one parse at a time (IMPORT_PARALLEL_PARSES=1), the next upload is
// parsed at once instead of after the abandoned one. Real SheetJS on a file
// that takes seconds to parse; both databases (no statement is involved).

/** A sheet big enough that its parse takes seconds: `n` rows of five columns. */
function bigSheet(n: number): Buffer {
  const rows: Cell[][] = [['Title', 'N', 'Notes', 'Owner', 'Kind']];
  for (let i = 1; i <= n; i++) rows.push([`row ${i}`, i, `note ${i} `.repeat(3), `owner ${i % 50}`, `kind ${i % 7}`]);
  return sheetFile(rows, 'xlsx');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an upload whose client went away', () => {
  let t: TestApp;
  let u: TestUser;
  let port: number;
  let big: Buffer;

  beforeAll(async () => {
    ({ t, alice: u } = await importWorld({ env: { IMPORT_PARALLEL_PARSES: '1', IMPORT_PARSE_TIMEOUT_MS: '120000' } }));
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    big = bigSheet(120_000);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Sends the big file and leaves `afterMs` after its last byte went out. */
  function sendBigAndLeave(afterMs: number): Promise<void> {
    const { body, type } = multipartBody('file', 'big.xlsx', big);
    return new Promise((resolve) => {
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: DISCOVER, headers: { ...as(u), 'Content-Type': type, 'Content-Length': body.length } });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.end(body, () => setTimeout(() => req.destroy(), afterMs));
    });
  }

  it('stops its parse, so the next upload is parsed at once', async () => {
    // How long the big file's parse takes here, kept to the end.
    let started = Date.now();
    await t.http.post(DISCOVER).set(as(u)).attach('file', big, 'big.xlsx').expect(201);
    const wholeParse = Date.now() - started;
    expect(wholeParse).toBeGreaterThan(1500);

    // The same file again, left 300 ms into its parse; then a small upload.
    await sendBigAndLeave(300);
    await sleep(50);
    started = Date.now();
    const small = await t.http.post(DISCOVER).set(as(u)).attach('file', sheetFile([['Title'], ['a']], 'xlsx'), 'small.xlsx').expect(201);
    const smallTook = Date.now() - started;
    expect(small.body.rows).toBe(2);
    // Without the stop, the small file waits for the rest of the big parse.
    expect(smallTook).toBeLessThan(wholeParse / 2);
  });
});
