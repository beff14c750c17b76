import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { UploadMemoryBudget } from '../../../src/shared/upload-memory.js';
import { until } from '../../support/held-uploads.js';
import { type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

const BOUNDARY = 'cardwork-parameters-boundary';

type Part = { name: string; file?: string; type?: string; content: string };

function multipart(parts: Part[]): Buffer {
  const text = parts
    .map((p) => {
      const type = p.type ?? (p.file === undefined ? undefined : 'text/csv');
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${p.file === undefined ? '' : `; filename="${p.file}"`}${type ? `\r\nContent-Type: ${type}` : ''}\r\n\r\n${p.content}\r\n`;
    })
    .join('');
  return Buffer.from(`${text}--${BOUNDARY}--\r\n`);
}

/**
 * DESIGN.md §2 on the upload routes: a text field or a file part an upload
 * does not take is a 400 naming it (as `{"bogus": 1}` in JSON is), whichever
 * side of the file it comes and however the body is framed; nothing is kept.
 */
describe('upload routes refuse the parts they do not take', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser;
  let card: number;
  let port: number;
  let dataDir: string;
  let db: DataSource;
  let budget: UploadMemoryBudget;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-upload-parameters-'));
    let w: World;
    ({ t, c, ann, w } = await fieldsWorld({ env: { DATA_DIR: dataDir } }));
    await c.field(ann, w.project, 'Docs', 'files');
    card = (await c.card(ann, w.root, 'uploads')).id;
    db = t.app.get(DataSource);
    budget = t.app.get(UploadMemoryBudget);
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Posts a multipart body over a socket, with a Content-Length or chunked in two writes. */
  const post = (route: string, body: Buffer, chunked: boolean) =>
    new Promise<{ status: number; type: string; body: { errors?: unknown[] } & Record<string, unknown> }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `${API}${route}`,
        headers: {
          'X-Api-Key': ann.apiKey,
          'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
          ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(body.length) }),
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: JSON.parse(text) }));
      });
      req.on('error', reject);
      if (!chunked) return req.end(body);
      req.write(body.subarray(0, body.length >> 1));
      setTimeout(() => req.end(body.subarray(body.length >> 1)), 20);
    });

  const storedBlobs = () => readdirSync(path.join(dataDir, 'files'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  const count = async (sql: string) => Number((await db.query(sql))[0].n);
  const fileRows = () => count(`SELECT count(*) AS n FROM fields.files`);
  const uploadRows = () => count(`SELECT count(*) AS n FROM importer.uploads`);

  const file: Part = { name: 'value', file: 'f.txt', content: 'some bytes' };
  const bogus: Part = { name: 'bogus', content: '1' };

  it('a text field beside the file, before or after it, chunked or not: 400 naming it, on set and append, nothing stored', async () => {
    await post(`/cards/${card}/attributes/Docs/append`, multipart([{ ...file, file: 'kept.txt' }]), false).then((r) => expect(r.status).toBe(200));
    const [blobs, rows] = [storedBlobs(), await fileRows()];
    for (const route of [`/cards/${card}/attributes/Docs/append`, `/cards/${card}/attributes/Docs`]) {
      for (const parts of [[file, bogus], [bogus, file]]) {
        for (const chunked of [false, true]) {
          const res = await post(route, multipart(parts), chunked);
          expect({ route, chunked, status: res.status, type: res.type }).toEqual({ route, chunked, status: 400, type: expect.stringMatching(/^application\/problem\+json/) });
          expect(res.body.errors).toEqual([{ field: 'bogus', message: 'is not a part this upload takes (only the file part "value")' }]);
        }
      }
    }
    // Each of several is named; the part's own name sent as text beside the file is refused too.
    const res = await post(`/cards/${card}/attributes/Docs/append`, multipart([{ name: 'x', content: 'y' }, file, { name: 'value', content: 'https://example.com/a' }, bogus]), false);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'x', message: expect.stringMatching(/not a part this upload takes/) },
      { field: 'value', message: 'the file is the value: send the part "value" once, as a file' },
      { field: 'bogus', message: expect.stringMatching(/not a part this upload takes/) },
    ]);
    // A file part of another name, before or after the file, with a file name or none (which the parser drops): refused naming it.
    const other: Part = { ...file, name: 'other' };
    const nameless: Part = { name: 'other', type: 'application/octet-stream', content: 'bytes' };
    for (const parts of [[file, other], [other, file], [file, nameless], [nameless, file]]) {
      const res = await post(`/cards/${card}/attributes/Docs/append`, multipart(parts), false);
      expect({ parts, status: res.status, errors: res.body.errors }).toEqual({
        parts,
        status: 400,
        errors: [{ field: 'other', message: 'the file must be sent in a form part named "value"' }],
      });
    }
    const docs = (await c.get(ann, card)).attributes.Docs as Array<{ name: string }>;
    expect(docs.map((d) => d.name)).toEqual(['kept.txt']);
    expect([storedBlobs(), await fileRows()]).toEqual([blobs, rows]);
    await until(() => budget.inUse === 0, 'the upload memory to be given back');
  });

  it('discover: a text field beside the file (card_id, x) is a 400 naming each; no upload is kept', async () => {
    const sheet: Part = { name: 'file', file: 'a.csv', content: 'Title\nOne' };
    const before = await uploadRows();
    for (const parts of [[sheet, { name: 'card_id', content: '1' }, { name: 'x', content: 'y' }], [{ name: 'card_id', content: '1' }, { name: 'x', content: 'y' }, sheet]]) {
      for (const chunked of [false, true]) {
        const res = await post('/importers/spreadsheet/discover', multipart(parts), chunked);
        expect(res.status).toBe(400);
        expect(res.type).toMatch(/^application\/problem\+json/);
        expect(res.body.errors).toEqual([
          { field: 'card_id', message: 'is not a part this upload takes (only the file part "file")' },
          { field: 'x', message: 'is not a part this upload takes (only the file part "file")' },
        ]);
      }
    }
    expect(await uploadRows()).toBe(before);
    await until(() => budget.inUse === 0, 'the upload memory to be given back');
    const ok = await post('/importers/spreadsheet/discover', multipart([sheet]), true);
    expect(ok.status).toBe(201);
    expect(await uploadRows()).toBe(before + 1);
  });
});
