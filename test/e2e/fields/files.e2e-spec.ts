import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, expectRefusal, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

interface FileJson {
  id: number;
  name: string;
  size: number;
  mime_type: string;
  url: string;
}

/** supertest collects binary bodies as Buffers with this parser. */
function binary(res: Response & { setEncoding?: unknown }, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  (res as unknown as NodeJS.ReadableStream).on('data', (c: Buffer) => chunks.push(c));
  (res as unknown as NodeJS.ReadableStream).on('end', () => done(null, Buffer.concat(chunks)));
}

function listStoredFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

describe('files fields', () => {
  let t: TestApp, c: FieldsClient, w: World;
  let ann: TestUser, vic: TestUser, eve: TestUser;
  let dataDir: string;
  let source: Server;
  let sourceUrl: string;
  const served = randomBytes(70_000);
  const held: Array<() => void> = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-files-'));
    source = createServer((req, res) => {
      if (req.url === '/slow') {
        // Answered when the test says so (held downloads).
        held.push(() => {
          res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': served.length });
          res.end(served);
        });
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { Location: '/assets/report%20final.pdf' });
        return res.end();
      }
      res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': served.length });
      res.end(served);
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
    ({ t, c, ann, w, users: { vic, eve } } = await fieldsWorld({
      env: { FILE_URL_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir },
      users: { vic: 'viewer', eve: 'outsider' },
    }));
    await c.field(ann, w.project, 'Attachments', 'files');
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => source.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** GET the file through the URL the card shows (absolute, under BASE_URL). */
  const download = (file: FileJson, user: TestUser = ann) => {
    expect(file.url).toBe(`${t.config.baseUrl}/files/${file.id}`);
    return t.http.get(new URL(file.url).pathname).set(as(user)).buffer(true).parse(binary);
  };

  it('takes a multipart upload in the part "value" and gives it back byte for byte', async () => {
    const card = (await c.card(ann, w.root, 'upload')).id;
    const bytes = randomBytes(100_000);
    const res = await t.http
      .post(`${API}/cards/${card}/attributes/Attachments/append`)
      .set(as(ann))
      .attach('value', bytes, { filename: 'résumé final.bin', contentType: 'application/x-custom' })
      .expect(200);
    const [file] = res.body.attributes.Attachments as FileJson[];
    expect(file).toEqual({ id: expect.any(Number), name: 'résumé final.bin', size: bytes.length, mime_type: 'application/x-custom', url: expect.any(String) });
    const got = await download(file).expect(200);
    expect(Buffer.compare(got.body as Buffer, bytes)).toBe(0);
    expect(got.headers['content-type']).toBe('application/x-custom');
    expect(got.headers['content-length']).toBe(String(bytes.length));
    expect(got.headers['content-disposition']).toBe(
      `attachment; filename="r_sum_ final.bin"; filename*=UTF-8''r%C3%A9sum%C3%A9%20final.bin`,
    );
    expect(got.headers['x-content-type-options']).toBe('nosniff');
  });

  it('takes {"name", "data": text} and stores the text as UTF-8', async () => {
    const card = (await c.card(ann, w.root, 'text')).id;
    const text = 'line one\nligne deux — ü ✓\n';
    const res = await c.append(ann, card, 'Attachments', { name: 'notes.md', data: text }).expect(200);
    const [file] = res.body.attributes.Attachments as FileJson[];
    expect(file).toMatchObject({ name: 'notes.md', mime_type: 'text/markdown', size: Buffer.byteLength(text) });
    const got = await download(file).expect(200);
    expect(Buffer.compare(got.body as Buffer, Buffer.from(text, 'utf8'))).toBe(0);
    expect(got.headers['content-type']).toBe('text/markdown');
  });

  it('takes {"name", "data": "data:<mime>;base64,…"}', async () => {
    const card = (await c.card(ann, w.root, 'base64')).id;
    const bytes = randomBytes(4096);
    const res = await c
      .append(ann, card, 'Attachments', { name: 'pixel.png', data: `data:image/png;base64,${bytes.toString('base64')}` })
      .expect(200);
    const [file] = res.body.attributes.Attachments as FileJson[];
    expect(file).toMatchObject({ name: 'pixel.png', mime_type: 'image/png', size: 4096 });
    const got = await download(file).expect(200);
    expect(Buffer.compare(got.body as Buffer, bytes)).toBe(0);
    expect(got.headers['content-type']).toBe('image/png');
  });

  it('takes a URL, fetched by the server (private addresses allowed here by FILE_URL_ALLOW_PRIVATE)', async () => {
    const card = (await c.card(ann, w.root, 'url')).id;
    let res = await c.append(ann, card, 'Attachments', `${sourceUrl}/docs/report.pdf`).expect(200);
    res = await c.append(ann, card, 'Attachments', `${sourceUrl}/redirect`).expect(200);
    const files = res.body.attributes.Attachments as FileJson[];
    expect(files.map((f) => [f.name, f.mime_type, f.size])).toEqual([
      ['report.pdf', 'application/pdf', served.length],
      ['redirect', 'application/pdf', served.length],
    ]);
    for (const file of files) {
      const got = await download(file).expect(200);
      expect(Buffer.compare(got.body as Buffer, served)).toBe(0);
    }
  });

  it("fetches a URL value before locking the card: the card's other writes do not wait for the download", async () => {
    const card = (await c.card(ann, w.root, 'slow url')).id;
    const appending = c.append(ann, card, 'Attachments', `${sourceUrl}/slow`).then((res) => res);
    while (!held.length) await new Promise((r) => setTimeout(r, 10));
    // The download is held; the card is not locked meanwhile.
    const started = Date.now();
    await t.http.put(`${API}/cards/${card}`).set(as(ann)).send({ title: 'renamed while fetching' }).expect(200);
    expect(Date.now() - started).toBeLessThan(2000);
    held.shift()!();
    const res = await appending;
    expect(res.status).toBe(200);
    expect(res.body.title).toBe('renamed while fetching');
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.size)).toEqual([served.length]);
    const actions = (await c.stream(ann, card)).map((e) => e.action);
    expect(actions.filter((a) => a === 'card.attribute_changed')).toHaveLength(1);
  });

  it('set replaces the list (one value or an array of the JSON forms); null empties it', async () => {
    const card = (await c.card(ann, w.root, 'set')).id;
    await c.append(ann, card, 'Attachments', { name: 'old.txt', data: 'old' }).expect(200);
    let res = await c
      .set(ann, card, 'Attachments', [{ name: 'a.txt', data: 'A' }, `${sourceUrl}/b.pdf`, { name: 'c.bin', data: 'data:application/octet-stream;base64,AAEC' }])
      .expect(200);
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['a.txt', 'b.pdf', 'c.bin']);
    res = await c.set(ann, card, 'Attachments', { name: 'only.txt', data: 'only' }).expect(200);
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['only.txt']);
    res = await c.set(ann, card, 'Attachments', null).expect(200);
    expect(res.body.attributes.Attachments).toEqual([]);
  });

  it('a multipart upload also sets the field', async () => {
    const card = (await c.card(ann, w.root, 'set upload')).id;
    await c.append(ann, card, 'Attachments', { name: 'old.txt', data: 'old' }).expect(200);
    const res = await t.http
      .post(`${API}/cards/${card}/attributes/Attachments`)
      .set(as(ann))
      .attach('value', Buffer.from('new'), 'new.txt')
      .expect(200);
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['new.txt']);
  });

  it('refuses a file part without a file name in it (empty, blank, "..", a folder), naming what is wrong, and writes nothing', async () => {
    const card = (await c.card(ann, w.root, 'nameless parts')).id;
    await c.append(ann, card, 'Attachments', { name: 'kept.txt', data: 'kept' }).expect(200);
    const boundary = 'cardwork-test-boundary';
    const part = (filename: string, type: string) =>
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="value"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\nsome bytes\r\n--${boundary}--\r\n`,
      );
    const cases: Array<[string, string, RegExp]> = [
      ['', 'text/plain', /empty file name/],
      ['', 'application/octet-stream', /empty file name/],
      ['   ', 'text/plain', /empty file name/],
      ['..', 'text/plain', /"\.\." is not a file name/],
      ['..', 'application/octet-stream', /"\.\." is not a file name/],
      ['dir/', 'application/pdf', /"dir\/" is not a file name/],
    ];
    for (const [filename, type, message] of cases) {
      for (const op of ['', '/append']) {
        const res = await t.http
          .post(`${API}/cards/${card}/attributes/Attachments${op}`)
          .set(as(ann))
          .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
          .send(part(filename, type));
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body.errors).toEqual([{ field: 'value', message: expect.stringMatching(message) }]);
      }
    }
    expect(((await c.get(ann, card)).attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['kept.txt']);
    // A path sent as the name (as old browsers did) still gives its last segment.
    const res = await t.http
      .post(`${API}/cards/${card}/attributes/Attachments/append`)
      .set(as(ann))
      .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
      .send(part('C:\\Users\\ann\\report.txt', 'text/plain'))
      .expect(200);
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['kept.txt', 'report.txt']);
  });

  it('reads a file part\'s name as the parser does: the first file name wins and an empty one gives way (200); what it drops or reads as text is a 400', async () => {
    const card = (await c.card(ann, w.root, 'parser file names')).id;
    const boundary = 'cardwork-test-boundary';
    const send = (disposition: string) =>
      t.http
        .post(`${API}/cards/${card}/attributes/Attachments/append`)
        .set(as(ann))
        .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
        .send(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: text/plain\r\n\r\nsome bytes\r\n--${boundary}--\r\n`));
    await send('name="value"; filename="a.txt"; filename=""').expect(200);
    await send(`name="value"; filename="ok.txt"; filename*=UTF-8''; size=10`).expect(200);
    await send(`name="value"; filename*=UTF-8''; filename="ok2.txt"`).expect(200);
    const refused: Array<[string, RegExp]> = [
      ['name="value"; filename="x\\.."', /"x\\\\\.\." is not a file name/],
      ['name="value"; name="other"; filename=""', /empty file name/],
      ['name="value";\r\n filename=""', /empty file name/],
      // The parser skips a part whose disposition it cannot read (an empty filename* last is malformed to it).
      [`name="value"; filename="ok.txt"; filename*=UTF-8''`, /Content-Disposition cannot be read/],
    ];
    for (const [disposition, message] of refused) {
      const res = await send(disposition).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors).toEqual([{ field: 'value', message: expect.stringMatching(message) }]);
    }
    expect(((await c.get(ann, card)).attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['a.txt', 'ok.txt', 'ok2.txt']);
  });

  it('pop {"value": file_id} removes that file, pop without a body the last one; the content goes too', async () => {
    const card = (await c.card(ann, w.root, 'pop')).id;
    for (const name of ['1.txt', '2.txt', '3.txt']) await c.append(ann, card, 'Attachments', { name, data: name }).expect(200);
    const files = (await c.get(ann, card)).attributes.Attachments as FileJson[];
    const stored = listStoredFiles(path.join(dataDir, 'files')).length;
    let res = await c.pop(ann, card, 'Attachments', { value: files[1].id }).expect(200);
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['1.txt', '3.txt']);
    res = await c.pop(ann, card, 'Attachments').expect(200);
    expect((res.body.attributes.Attachments as FileJson[]).map((f) => f.name)).toEqual(['1.txt']);
    await download(files[1]).expect(404);
    await download(files[2]).expect(404);
    await download(files[0]).expect(200);
    expect(listStoredFiles(path.join(dataDir, 'files')).length).toBe(stored - 2);
    expectRefusal(await c.pop(ann, card, 'Attachments', { value: files[1].id }), 'Attachments');
  });

  it('stores contents under DATA_DIR/files', async () => {
    expect(listStoredFiles(path.join(dataDir, 'files')).length).toBeGreaterThan(0);
  });

  it('refuses bad file values and leaves the card unchanged', async () => {
    const card = (await c.card(ann, w.root, 'bad')).id;
    await c.append(ann, card, 'Attachments', { name: 'keep.txt', data: 'keep' }).expect(200);
    const before = await c.get(ann, card);
    const bad: unknown[] = [
      { name: 'no-data.txt' },
      { data: 'no name' },
      { name: '../escape.txt', data: 'x' },
      { name: ' ', data: 'a blank name' },
      { name: '', data: 'an empty name' },
      { name: 'x.bin', data: 'data:image/png;base64,@@@not base64@@@' },
      'ftp://example.com/file.txt',
      'not a url',
      123,
      [{ name: 'ok.txt', data: 'ok' }, { name: 'bad.txt' }],
    ];
    for (const value of bad) {
      expectRefusal(await c.set(ann, card, 'Attachments', value), 'Attachments');
      if (!Array.isArray(value)) expectRefusal(await c.append(ann, card, 'Attachments', value), 'Attachments');
    }
    expect(await c.get(ann, card)).toEqual(before);
  });

  it('refuses an upload into a field that is not a files field, and a file in another part', async () => {
    await c.field(ann, w.project, 'Words', 'text');
    const card = (await c.card(ann, w.root, 'wrong')).id;
    let res = await t.http.post(`${API}/cards/${card}/attributes/Words/append`).set(as(ann)).attach('value', Buffer.from('x'), 'x.txt');
    expect(res.status).toBe(400);
    res = await t.http.post(`${API}/cards/${card}/attributes/Attachments/append`).set(as(ann)).attach('file', Buffer.from('x'), 'x.txt');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/value/);
  });

  it('downloads follow the card: viewers may, other teams get 404, no credentials 401', async () => {
    const card = (await c.card(ann, w.root, 'access')).id;
    const res = await c.append(ann, card, 'Attachments', { name: 'secret.txt', data: 'secret' }).expect(200);
    const [file] = res.body.attributes.Attachments as FileJson[];
    await download(file, vic).expect(200);
    const refused = await download(file, eve).expect(404);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    await t.http.get(`${API}/files/${file.id}`).expect(401);
    await t.http.get(`${API}/files/99999999`).set(as(ann)).expect(404);
    await t.http.get(`${API}/files/abc`).set(as(ann)).expect(404);
    expect((await c.append(vic, card, 'Attachments', { name: 'v.txt', data: 'v' })).status).toBe(403);
    expect((await c.append(eve, card, 'Attachments', { name: 'e.txt', data: 'e' })).status).toBe(404);
  });

  it('deleting the card, the field or the project takes the files and their contents with it', async () => {
    const stored = () => listStoredFiles(path.join(dataDir, 'files')).length;
    const card = (await c.card(ann, w.root, 'doomed')).id;
    const res = await c.append(ann, card, 'Attachments', { name: 'gone.txt', data: 'gone' }).expect(200);
    const [file] = res.body.attributes.Attachments as FileJson[];
    let before = stored();
    await t.http.delete(`${API}/cards/${card}`).set(as(ann)).expect(200);
    await download(file).expect(404);
    expect(stored()).toBe(before - 1);

    const p = await c.project(ann, w.org, 'Doomed project');
    const field = await c.field(ann, p.project, 'Docs', 'files');
    const inP = (await c.card(ann, p.root, 'in project')).id;
    await c.set(ann, inP, 'Docs', [{ name: '1.txt', data: '1' }, { name: '2.txt', data: '2' }]).expect(200);
    before = stored();
    await t.http.delete(`${API}/attributes/${field.id}`).set(as(ann)).expect(200);
    expect(stored()).toBe(before - 2);
    await c.field(ann, p.project, 'Docs', 'files');
    await c.set(ann, inP, 'Docs', [{ name: '3.txt', data: '3' }]).expect(200);
    before = stored();
    await t.http.delete(`${API}/projects/${p.project}`).set(as(ann)).expect(200);
    expect(stored()).toBe(before - 1);
  });

  it('keeps no stored content when a batch fails after a file was stored', async () => {
    await c.field(ann, w.project, 'Owners', 'members');
    const card = (await c.card(ann, w.root, 'rolled back')).id;
    const before = listStoredFiles(path.join(dataDir, 'files')).length;
    const res = await c.setMany(ann, card, { Attachments: { name: 'x.txt', data: 'x' }, Owners: [eve.id] });
    expectRefusal(res, 'Owners');
    expect(listStoredFiles(path.join(dataDir, 'files')).length).toBe(before);
    expect((await c.get(ann, card)).attributes.Attachments).toEqual([]);
  });
});

describe('upload size cap', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser;
  let card: number;
  let port: number;
  const CAP = 8 * 1024;

  beforeAll(async () => {
    let w: World;
    ({ t, c, ann, w } = await fieldsWorld({ env: { MAX_UPLOAD_BYTES: String(CAP) } }));
    await c.field(ann, w.project, 'Attachments', 'files');
    card = (await c.card(ann, w.root, 'capped')).id;
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  it('answers 413 for a file over MAX_UPLOAD_BYTES and keeps nothing', async () => {
    const res = await t.http
      .post(`${API}/cards/${card}/attributes/Attachments/append`)
      .set(as(ann))
      .attach('value', randomBytes(CAP + 1), 'big.bin');
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await c.get(ann, card)).attributes.Attachments).toEqual([]);
    await t.http
      .post(`${API}/cards/${card}/attributes/Attachments/append`)
      .set(as(ann))
      .attach('value', randomBytes(CAP), 'fits.bin')
      .expect(200);
  });

  it('answers 413 for the data forms over the cap too', async () => {
    const big = randomBytes(CAP + 10).toString('base64');
    const res = await c.append(ann, card, 'Attachments', { name: 'big.bin', data: `data:application/octet-stream;base64,${big}` });
    expect(res.status).toBe(413);
  });

  /** Sends the head of a multipart body and holds the rest back: the 413 must come before it is sent. */
  const answerWithoutTheRest = (headers: Record<string, string | number>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const boundary = 'cardworkboundary';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="value"; filename="huge.bin"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      );
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `${API}/cards/${card}/attributes/Attachments/append`,
        headers: { 'X-Api-Key': ann.apiKey, 'Content-Type': `multipart/form-data; boundary=${boundary}`, ...headers },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', reject);
      req.write(head);
      // More than the cap, far less than declared (or than the stream would go on to send).
      req.write(randomBytes(CAP * 4));
    });

  it('answers 413 from Content-Length alone, before reading the body', async () => {
    const res = await answerWithoutTheRest({ 'Content-Length': 100 * 1024 * 1024 });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ status: 413 });
  });

  it('answers 413 as soon as a chunked upload passes the cap', async () => {
    const res = await answerWithoutTheRest({ 'Transfer-Encoding': 'chunked' });
    expect(res.status).toBe(413);
    expect((await c.get(ann, card)).attributes.Attachments).toHaveLength(1);
  });
});
