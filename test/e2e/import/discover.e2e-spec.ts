import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { DISCOVER, importWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';
import {
  commentRegexBombXlsx,
  giantFieldCsv,
  prototypePollutionXlsx,
  sheetFile,
  writeZip,
  zipBombXlsx,
  zipEntries,
  type SheetFormat,
} from '../../support/spreadsheets.js';

/** Short enough to keep the suite quick; the default (30 s) is documented in docs/IMPORT.md. */
const PARSE_TIMEOUT_MS = 8000;

describe('POST /importers/spreadsheet/discover', () => {
  let t: TestApp, alice: TestUser;
  beforeAll(async () => ({ t, alice } = await importWorld({ env: { IMPORT_PARSE_TIMEOUT_MS: String(PARSE_TIMEOUT_MS) } })));
  afterAll(() => t.close());

  const upload = (file: Buffer, name = 'sheet') => t.http.post(DISCOVER).set(as(alice)).attach('file', file, name);

  const rows = [
    ['Title', 'Estimate', 'Tags', ''],
    ['Write docs', 3, 'docs, writing'],
    ['Fix bug', 5, 'bug'],
    ['Ship', '', 'release', 'extra'],
  ];

  it.each<SheetFormat>(['xlsx', 'csv', 'ods'])('reads a %s file by its content, whatever its name', async (format) => {
    const res = await upload(sheetFile(rows, format), 'upload.bin').expect(201);
    expect(res.body).toEqual({
      file_id: expect.any(Number),
      format,
      rows: 4,
      fields: [
        { column: 0, name: 'Title', samples: ['Write docs', 'Fix bug', 'Ship'] },
        { column: 1, name: 'Estimate', samples: ['3', '5'] },
        { column: 2, name: 'Tags', samples: ['docs, writing', 'bug', 'release'] },
        { column: 3, name: 'Column D', samples: ['extra'] },
      ],
    });
  });

  it('reads ODS dates before 1900-03-01 as the calendar dates they are (not Excel 1900-system serials)', async () => {
    // As LibreOffice writes them: a day alone or with a time, no zone.
    const days = ['1900-02-28', '1899-12-30', '1850-01-05', '1900-03-01', '1899-12-31T06:00:00', '1700-06-15T12:30:00'];
    const cells = days.map((d) => `<table:table-cell office:value-type="date" office:date-value="${d}"><text:p>x</text:p></table:table-cell>`);
    const entries = zipEntries(sheetFile([days.map((_, i) => `D${i}`), days.map((_, i) => `CELL${i}`)], 'ods')).map((e) =>
      e.name === 'content.xml'
        ? { ...e, data: Buffer.from(e.data.toString('utf8').replace(/<table:table-cell[^>]*>\s*<text:p>CELL(\d)<\/text:p>\s*<\/table:table-cell>/g, (_, i: string) => cells[Number(i)])) }
        : e,
    );
    const res = await upload(writeZip(entries)).expect(201);
    expect(res.body.fields.map((f: { samples: string[] }) => f.samples)).toEqual(days.map((d) => [d]));
  });

  it('reads semicolon CSV, Windows-1252 text and a byte-order mark', async () => {
    const semicolons = await upload(Buffer.from('\ufeffTitle;Note\nCafé;"a;b"\n')).expect(201);
    expect(semicolons.body.fields).toEqual([
      { column: 0, name: 'Title', samples: ['Café'] },
      { column: 1, name: 'Note', samples: ['a;b'] },
    ]);
    const latin = await upload(Buffer.from('Title\nCaf\xe9\n', 'latin1')).expect(201);
    expect(latin.body.fields[0].samples).toEqual(['Café']);
  });

  it('reads a quote inside an unquoted CSV field as a character, and refuses a quoted field never closed', async () => {
    const stray = await upload(Buffer.from('Title,Size\nTV,12" screen\n"Say ""hi""",a"b"\n')).expect(201);
    expect(stray.body.fields).toEqual([
      { column: 0, name: 'Title', samples: ['TV', 'Say "hi"'] },
      { column: 1, name: 'Size', samples: ['12" screen', 'a"b"'] },
    ]);
    const open = await upload(Buffer.from('Title\nfine\n"never closed\n')).expect(400);
    expect(open.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(open.body.detail).toMatch(/CSV syntax error.*a quoted field is never closed/);
  });

  it('reads text with a stray control byte (a vertical tab, an escape, a NUL past the first KiB) or a tag in its first cell as CSV', async () => {
    // Before, any such byte anywhere, or a first cell starting with `<`, was a 415 for the whole file.
    const filemaker = await upload(Buffer.from('Title,Notes\rWrite docs,first\x0bsecond\rShip\x1b[1m,x\r', 'latin1')).expect(201);
    expect([filemaker.body.format, filemaker.body.fields]).toEqual([
      'csv',
      [
        { column: 0, name: 'Title', samples: ['Write docs', 'Ship\x1b[1m'] },
        { column: 1, name: 'Notes', samples: ['first\x0bsecond', 'x'] },
      ],
    ]);
    const late = await upload(Buffer.from(`Title,Notes\n${'a,b\n'.repeat(300)}nul\x00here,c\n`)).expect(201);
    expect([late.body.rows, late.body.fields[0].samples]).toEqual([302, ['a', 'nul\uFFFDhere']]);
    const tagged = await upload(Buffer.from('<b>Title</b>,<none>\nShip,x\n')).expect(201);
    expect(tagged.body.fields).toEqual([
      { column: 0, name: '<b>Title</b>', samples: ['Ship'] },
      { column: 1, name: '<none>', samples: ['x'] },
    ]);
  });

  it('answers 415 for formats it does not take', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
    const notSheet = writeZip([{ name: 'readme.txt', data: Buffer.from('hello') }]);
    const xls = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(512)]);
    const markup = [
      '<html><table><tr><td>x</td></tr></table></html>',
      '<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet">',
      '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">',
      '\n  <!DOCTYPE html>\n<html><body><table><tr><td>x</td></tr></table></body></html>',
    ].map((text) => Buffer.from(text));
    const pdf = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n', 'latin1');
    const nulEarly = Buffer.from('Title\nA\x00B\n', 'latin1');
    for (const file of [png, notSheet, xls, pdf, nulEarly, ...markup]) {
      const res = await upload(file, 'data.csv').expect(415);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toMatch(/XLSX, CSV or ODS/);
    }
  });

  it('answers 415 naming UTF-32 for a UTF-32 CSV (little- or big-endian), not headers of U+FFFD', async () => {
    const text = 'Title,Estimate\nWrite docs,3\n';
    const codePoints = [0xfeff, ...[...text].map((c) => c.codePointAt(0)!)];
    const le = Buffer.alloc(4 * codePoints.length);
    const be = Buffer.alloc(le.length);
    codePoints.forEach((cp, i) => (le.writeUInt32LE(cp, 4 * i), be.writeUInt32BE(cp, 4 * i)));
    for (const file of [le, be]) {
      const res = await upload(file, 'data.csv').expect(415);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toMatch(/UTF-32/);
    }
  });

  it('needs the part "file"', async () => {
    const res = await t.http.post(DISCOVER).set(as(alice)).attach('value', Buffer.from('a\n'), 'x.csv').expect(400);
    expect(res.body.errors).toEqual([{ field: 'value', message: 'the file must be sent in a form part named "file"' }]);
    const none = await t.http.post(DISCOVER).set(as(alice)).field('x', '1').expect(400);
    expect(none.body.errors[0].field).toBe('file');
  });

  it('without a file, names the part "file" and each parameter it does not take: a text mapping, a JSON body, the spreadsheet sent as text', async () => {
    const required = { field: 'file', message: 'is required: send the spreadsheet as a multipart/form-data part named "file"' };
    const notTaken = (field: string) => ({ field, message: 'is not a part this upload takes (only the file part "file")' });
    const text = await t.http.post(DISCOVER).set(as(alice)).field('mapping', '{"0":{"type":"title"}}').field('project_id', '1').expect(400);
    expect(text.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(text.body).toMatchObject({ type: 'INPUT.INVALID', errors: [required, notTaken('mapping'), notTaken('project_id')] });
    expect(text.body.detail).toMatch(/^file: is required.*; mapping: is not a part/);
    const json = await t.http.post(DISCOVER).set(as(alice)).send({ mapping: { '0': { type: 'title' } } }).expect(400);
    expect(json.body.errors).toEqual([required, notTaken('mapping')]);
    const asText = await t.http.post(DISCOVER).set(as(alice)).field('file', 'Title\nOne').expect(400);
    expect(asText.body.errors).toEqual([{ field: 'file', message: expect.stringMatching(/as a file .*not as text/) }]);
    const nothing = await t.http.post(DISCOVER).set(as(alice)).expect(400);
    expect(nothing.body.errors).toEqual([required]);
  });

  it('refuses a query string beside the upload (DESIGN.md §2 would not read it), naming each parameter; nothing is kept', async () => {
    const uploads = async () => Number((await t.app.get(DataSource).query(`SELECT count(*) AS n FROM importer.uploads`))[0].n);
    const before = await uploads();
    const sheet = sheetFile([['Title'], ['One']], 'csv');
    const res = await t.http.post(`${DISCOVER}?project_id=1&bogus=x`).set(as(alice)).attach('file', sheet, 'sheet.csv').expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const message = 'the query string is not read beside a multipart upload (its parameters are its form parts)';
    expect(res.body.errors).toEqual([
      { field: 'project_id', message },
      { field: 'bogus', message },
    ]);
    expect(await uploads()).toBe(before);
    // Authentication still answers first; the same upload without the query is taken.
    await t.http.post(`${DISCOVER}?bogus=x`).attach('file', sheet, 'sheet.csv').expect(401);
    await t.http.post(DISCOVER).set(as(alice)).attach('file', sheet, 'sheet.csv').expect(201);
    expect(await uploads()).toBe(before + 1);
  });

  describe('hostile files', () => {
    /** Sends `file` while pinging GET /me: the server must keep answering, and the file must be refused fast. */
    async function refusedWhileServing(file: Buffer, status: number): Promise<Record<string, unknown>> {
      const started = Date.now();
      let pings = 0;
      let slowestPing = 0;
      let done = false;
      const pinger = (async () => {
        while (!done) {
          const t0 = Date.now();
          await t.http.get(`${API}/me`).set(as(alice)).expect(200);
          slowestPing = Math.max(slowestPing, Date.now() - t0);
          pings++;
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const res = await upload(file, 'evil.xlsx');
      done = true;
      await pinger;
      expect(res.status).toBe(status);
      expect(Date.now() - started).toBeLessThan(PARSE_TIMEOUT_MS + 3000);
      // Generous: the suite shares two cores with other suites; a blocked event loop would show the whole parse time.
      expect(slowestPing).toBeLessThan(2500);
      expect(pings).toBeGreaterThan(0);
      expect(({} as Record<string, unknown>).c).toBeUndefined();
      expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('c');
      return res.body;
    }

    it('refuses the prototype-pollution comment (CVE-2023-30533 shape) and leaves Object.prototype alone', async () => {
      const body = await refusedWhileServing(prototypePollutionXlsx(), 400);
      expect(body.type).toBe('IMPORT.UNREADABLE_FILE');
      expect(body.detail).toMatch(/prototype/);
    });

    it('stops the comment-regex bomb in styles.xml (CVE-2024-22363 shape) at the parse timeout', async () => {
      const file = commentRegexBombXlsx();
      expect(file.length).toBeLessThan(64 * 1024);
      const body = await refusedWhileServing(file, 400);
      expect(body.detail).toMatch(/longer than 8000 ms/);
    });

    it('refuses a zip bomb before inflating it', async () => {
      const body = await refusedWhileServing(zipBombXlsx(), 413);
      expect(body.detail).toMatch(/times its compressed size/);
      expect(body.limit).toBe('IMPORT_ZIP_MAX_RATIO');
    });

    it('refuses an entry that inflates past the size its headers declare', async () => {
      const body = await refusedWhileServing(zipBombXlsx(64 * 1024 * 1024, 1000), 413);
      expect(body.limit).toBe('IMPORT_ZIP_MAX_RATIO');
    });

    it('refuses a CSV with a giant field', async () => {
      const body = await refusedWhileServing(giantFieldCsv(15 * 1024 * 1024), 413);
      expect(body.limit).toBe('IMPORT_MAX_CELL_CHARS');
    });

    it('reads a zip64 XLSX (sizes in zip64 extra fields), and keeps refusing a zip64 bomb, a huge zip64 size and sizes that disagree', async () => {
      const entries = zipEntries(sheetFile(rows, 'xlsx'));
      for (const zip64 of ['local', 'everywhere'] as const) {
        const res = await upload(writeZip(entries, { zip64 }), 'zip64.xlsx').expect(201);
        expect([zip64, res.body.rows, res.body.fields[0]]).toEqual([zip64, 4, { column: 0, name: 'Title', samples: ['Write docs', 'Fix bug', 'Ship'] }]);
      }
      const bomb = entries.map((e) => (e.name === 'xl/worksheets/sheet1.xml' ? { ...e, data: Buffer.alloc(64 * 1024 * 1024, 0x20), declaredSize: 1000 } : e));
      expect((await upload(writeZip(bomb, { zip64: 'everywhere' })).expect(413)).body.limit).toBe('IMPORT_ZIP_MAX_RATIO');
      const huge = entries.map((e) => (e.name === 'xl/worksheets/sheet1.xml' ? { ...e, declaredSize: 2 ** 40 } : e));
      expect((await upload(writeZip(huge, { zip64: 'everywhere' })).expect(413)).body.limit).toBe('IMPORT_ZIP_MAX_ENTRY_BYTES');
      const disagreeing = writeZip(entries, { zip64: 'local' });
      // The first local header's zip64 uncompressed size (after its 30 fixed bytes, its name and the extra field's 4-byte header).
      disagreeing.writeBigUInt64LE(7n, 30 + Buffer.byteLength(entries[0].name) + 4);
      const corrupt = await upload(disagreeing).expect(400);
      expect(corrupt.body.detail).toBe('The spreadsheet cannot be read: the zip archive is corrupt (the central directory and a local header disagree on sizes)');
    });

    it('refuses a zip with too many entries', async () => {
      const base = zipEntries(sheetFile([['Title']], 'xlsx'));
      const padding = Array.from({ length: 1200 }, (_, i) => ({ name: `pad/${i}.xml`, data: Buffer.from('<x/>') }));
      const res = await upload(writeZip([...base, ...padding])).expect(413);
      expect(res.body.limit).toBe('IMPORT_ZIP_MAX_ENTRIES');
    });
  });
});
