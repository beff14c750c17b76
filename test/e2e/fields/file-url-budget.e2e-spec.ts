import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FileUrlPolicy } from '../../../src/modules/fields/files/application/file-inputs.service.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

const CAP = 100_000;
const FILE_BYTES = 40_000;
const TIMEOUT_MS = 2000;
const SLOW_MS = 1200;

function storedFiles(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

/**
 * The URLs of one request share one size cap (MAX_UPLOAD_BYTES in all) and
 * one timeout. Each URL had its own: a single request listing many URLs made
 * the server download and hold MAX_UPLOAD_BYTES per URL in memory (a 1 MiB
 * body names tens of thousands of them) for up to 30 s per URL.
 */
describe('file by URL: what one request may download', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser, w: World;
  let dataDir: string;
  let source: Server;
  let base: string;
  let hits = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-url-budget-'));
    source = createServer((req, res) => {
      hits++;
      const answer = () => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': FILE_BYTES });
        res.end(Buffer.alloc(FILE_BYTES, 7));
      };
      if (req.url?.startsWith('/slow')) setTimeout(answer, SLOW_MS);
      else answer();
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
    ({ t, c, ann, w } = await fieldsWorld({
      env: { FILE_URL_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir, MAX_UPLOAD_BYTES: String(CAP) },
      override: (app) => {
        app.get(FileUrlPolicy).timeoutMs = TIMEOUT_MS;
      },
    }));
    await c.field(ann, w.project, 'Docs', 'files');
    await c.field(ann, w.project, 'More', 'files');
  });
  afterAll(async () => {
    await t.close();
    source.closeAllConnections();
    await new Promise((resolve) => source.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const urls = (n: number, route = 'f') => Array.from({ length: n }, (_, i) => `${base}/${route}${i}.bin`);
  const filesDir = () => path.join(dataDir, 'files');

  it('takes files by URL within the cap', async () => {
    const card = (await c.card(ann, w.root, 'two')).id;
    const res = await c.set(ann, card, 'Docs', urls(2)).expect(200);
    expect((res.body.attributes.Docs as Array<{ size: number }>).map((f) => f.size)).toEqual([FILE_BYTES, FILE_BYTES]);
  });

  it('refuses a list of URLs that passes the cap in all, after downloading no more than the cap', async () => {
    const card = (await c.card(ann, w.root, 'many')).id;
    const before = await c.get(ann, card);
    const stored = storedFiles(filesDir());
    hits = 0;
    const res = await c.set(ann, card, 'Docs', urls(10));
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe(`Docs: file URLs of one request may bring at most ${CAP} bytes in all`);
    expect(hits).toBeLessThanOrEqual(Math.ceil(CAP / FILE_BYTES));
    expect(await c.get(ann, card)).toEqual(before);
    expect(storedFiles(filesDir())).toBe(stored);
  });

  it('counts every files field of a batch, and a new card\'s values, against one cap', async () => {
    const card = (await c.card(ann, w.root, 'batch')).id;
    const before = await c.get(ann, card);
    let res = await c.setMany(ann, card, { attributes: { Docs: urls(2), More: urls(2) } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^More: file URLs of one request may bring at most/);
    expect(await c.get(ann, card)).toEqual(before);

    const listed = async () => (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body.length;
    const count = await listed();
    res = await t.http
      .post(`${API}/cards/${w.root}/children`)
      .set(as(ann))
      .send({ title: 'with too much', attributes: { Docs: urls(2), More: urls(1) } });
    expect(res.status).toBe(400);
    expect(await listed()).toBe(count);
  });

  it('gives all the URLs of one request one timeout, not one each', async () => {
    const card = (await c.card(ann, w.root, 'slow')).id;
    const before = await c.get(ann, card);
    hits = 0;
    const started = Date.now();
    const res = await c.set(ann, card, 'Docs', urls(2, 'slow'));
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe('Docs: file URL timed out');
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
    expect(hits).toBe(2);
    expect(await c.get(ann, card)).toEqual(before);
  });
});
