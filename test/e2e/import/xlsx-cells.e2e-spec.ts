import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DISCOVER, IMPORT, importWorld, type ImportWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';
import { sheetFile, withSheetXml, writeZip, zipEntries } from '../../support/spreadsheets.js';

/** XLSX files as other exporters write them: what the worksheet declares, and ISO date cells. */
describe('XLSX sheets as other exporters write them', () => {
  let t: TestApp, alice: TestUser, ws: ImportWorld['ws'], team: number;
  beforeAll(async () => ({ t, alice, ws, team } = await importWorld()));
  afterAll(() => t.close());

  const upload = (file: Buffer) => t.http.post(DISCOVER).set(as(alice)).attach('file', file, 'sheet.xlsx');
  const declaring = (file: Buffer, ref: string) => withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, `<dimension ref="${ref}"/>`));
  const withRow = (file: Buffer, row: string) => withSheetXml(file, (xml) => xml.replace('</sheetData>', `${row}</sheetData>`));
  const text = (ref: string, value: string) => `<c r="${ref}" t="inlineStr"><is><t>${value}</t></is></c>`;

  it('imports the rows of a sheet that declares a range of a million rows and more columns than the cap', async () => {
    const file = sheetFile([['Title', 'Estimate'], ['Write docs', 3], ['Ship', 5]], 'xlsx');
    for (const ref of ['A1:Z1048576', 'A1:XFD3']) {
      const res = await upload(declaring(file, ref)).expect(201);
      expect([ref, res.body]).toEqual([
        ref,
        {
          file_id: expect.any(Number),
          format: 'xlsx',
          rows: 3,
          fields: [
            { column: 0, name: 'Title', samples: ['Write docs', 'Ship'] },
            { column: 1, name: 'Estimate', samples: ['3', '5'] },
          ],
        },
      ]);
    }
    const project = await ws.project(alice, team, 'Declared');
    const fileId = (await upload(declaring(file, 'A1:Z1048576')).expect(201)).body.file_id;
    const res = await t.http
      .post(IMPORT)
      .set(as(alice))
      .send({ discover_file_id: fileId, project_id: project.id, options: { ignore_header: true }, mapping: { '0': { type: 'title' } } })
      .expect(200);
    expect(res.body).toEqual({ project_id: project.id, created: 2, updated: 0, skipped: 0, children_created: 0 });
  });

  it('refuses a real row past IMPORT_MAX_ROWS or a real cell past IMPORT_MAX_COLUMNS, whatever the sheet declares', async () => {
    const file = sheetFile([['Title'], ['a']], 'xlsx');
    const farRow = declaring(withRow(file, `<row r="200001">${text('A200001', 'far')}</row>`), 'A1:A2');
    const rows = await upload(farRow).expect(413);
    expect(rows.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(rows.body).toMatchObject({ status: 413, limit: 'IMPORT_MAX_ROWS', detail: 'The spreadsheet has more than 200000 rows (limit set by IMPORT_MAX_ROWS)' });
    // Column GT is the 202nd; the cap is 200.
    const farCell = declaring(withRow(file, `<row r="3">${text('GT3', 'far')}</row>`), 'A1:A3');
    const columns = await upload(farCell).expect(413);
    expect(columns.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(columns.body).toMatchObject({ status: 413, limit: 'IMPORT_MAX_COLUMNS', detail: expect.stringMatching(/202 columns, more than 200/) });
  });

  it('reads ISO date cells (t="d") as calendar dates, which a date field takes', async () => {
    const rows =
      `<row r="2">${text('A2', 'Write docs')}<c r="B2" t="d"><v>2026-01-05T00:00:00</v></c><c r="C2" t="d"><v>2026-01-05T10:30:00</v></c></row>` +
      `<row r="3">${text('A3', 'Ship')}<c r="B3" t="d"><v>2026-02-28</v></c></row>`;
    const file = declaring(withRow(sheetFile([['Title', 'Due', 'Stamp']], 'xlsx'), rows), 'A1:C3');
    const discovered = await upload(file).expect(201);
    expect(discovered.body.fields).toEqual([
      { column: 0, name: 'Title', samples: ['Write docs', 'Ship'] },
      { column: 1, name: 'Due', samples: ['2026-01-05', '2026-02-28'] },
      { column: 2, name: 'Stamp', samples: ['2026-01-05T10:30:00'] },
    ]);
    const project = await ws.project(alice, team, 'ISO dates');
    await t.http
      .post(IMPORT)
      .set(as(alice))
      .send({
        discover_file_id: discovered.body.file_id,
        project_id: project.id,
        options: { ignore_header: true },
        mapping: { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'date', name: 'Due' } },
      })
      .expect(200);
    const cards = (await t.http.get(`${API}/projects/${project.id}/cards`).set(as(alice)).expect(200)).body as Array<{
      title: string;
      parent_id: number;
      attributes: Record<string, unknown>;
    }>;
    const due = Object.fromEntries(cards.filter((c) => c.parent_id === project.top_level_card_id).map((c) => [c.title, c.attributes.Due]));
    expect(due).toEqual({ 'Write docs': '2026-01-05', Ship: '2026-02-28' });
  });

  it('refuses a worksheet cut short (mid-row, small or read in windows) and a workbook listing no sheet as 400 IMPORT.UNREADABLE_FILE', async () => {
    const rows = [['Title', 'N'], ...Array.from({ length: 20 }, (_, i) => [`Card ${i}`, i])];
    const cutMidRow = (xml: string) => xml.slice(0, xml.indexOf('<row r="5"') + 20);
    // Over 2 MiB of XML: read a window at a time.
    const big = sheetFile([['Title', 'Note'], ...Array.from({ length: 40_000 }, (_, i) => [`Card ${i}`, 'x'.repeat(40)])], 'xlsx');
    const cutBig = (xml: string) => xml.slice(0, Math.floor(xml.length * 0.9));
    const noSheet = (() => {
      const entries = zipEntries(sheetFile(rows, 'xlsx'));
      const book = entries.find((e) => e.name === 'xl/workbook.xml')!;
      book.data = Buffer.from(book.data.toString('utf8').replace(/<sheets>.*<\/sheets>/s, '<sheets></sheets>'));
      return writeZip(entries);
    })();
    for (const [file, why] of [
      [withSheetXml(sheetFile(rows, 'xlsx'), cutMidRow), 'is cut short'],
      [withSheetXml(big, cutBig), 'is cut short'],
      [noSheet, 'the workbook lists no sheet'],
    ] as const) {
      const res = await upload(file);
      expect([res.status, res.body.type]).toEqual([400, 'IMPORT.UNREADABLE_FILE']);
      expect(res.body.detail).toContain(why);
    }
    // The same files whole are read.
    expect((await upload(sheetFile(rows, 'xlsx')).expect(201)).body.rows).toBe(21);
    expect((await upload(big).expect(201)).body.rows).toBe(40_001);
  }, 60_000);

  it('refuses a sheet SheetJS cannot read (a cell naming a shared string the workbook lacks) as a 400 naming the cell, not as an empty sheet', async () => {
    const dangling = `<row r="3"><c r="A3" t="s"><v>99</v></c></row><row r="4">${text('A4', 'Card C')}</row>`;
    const cases: Array<[Buffer, string]> = [
      [sheetFile([['Title'], ['Card A']], 'xlsx'), 'the workbook has no shared-strings part'],
      [sheetFile([['Title'], ['Card A']], 'xlsx', { sharedStrings: true }), "the workbook's shared-strings part holds 2"],
    ];
    for (const [file, why] of cases) {
      const res = await upload(declaring(withRow(file, dangling), 'A1:A4')).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: 'IMPORT.UNREADABLE_FILE',
        status: 400,
        detail: `The spreadsheet cannot be read: cell A3 names shared string "99", but ${why}`,
      });
    }
  });

  it("reads cells of Excel's East-Asian built-in date formats (ids 27-36, 50-58) as dates, as id 14", async () => {
    // As Chinese, Japanese or Korean Excel writes them: a cell style naming the id, and no numFmt of its own.
    const ids = [14, 27, 30, 31, 36, 50, 57, 58, 56, 32];
    const book = sheetFile([['Title', ...ids.map((id) => `Format ${id}`)]], 'xlsx');
    const styles = (file: Buffer, formats: number[], edit = (xml: string) => xml) =>
      withSheetXml(
        file,
        (xml) =>
          edit(xml).replace(/<cellXfs count="1">(.*?)<\/cellXfs>/, (_, first: string) => {
            const xfs = formats.map((id) => `<xf numFmtId="${id}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>`);
            return `<cellXfs count="${formats.length + 1}">${first}${xfs.join('')}</cellXfs>`;
          }),
        'xl/styles.xml',
      );
    const styled = styles(book, ids, (xml) => xml.replace(/<numFmts[^>]*>[\s\S]*?<\/numFmts>/, ''));
    const cells = (row: number, serial: number) =>
      ids.map((_, i) => `<c r="${String.fromCharCode(66 + i)}${row}" s="${i + 1}"><v>${serial}</v></c>`).join('');
    const rows = `<row r="2">${text('A2', 'Noon')}${cells(2, 46027.5)}</row><row r="3">${text('A3', 'Midnight')}${cells(3, 46027)}</row>`;
    const file = declaring(withRow(styled, rows), 'A1:K3');
    const res = await upload(file).expect(201);
    const samples = Object.fromEntries(res.body.fields.slice(1).map((f: { name: string; samples: string[] }) => [f.name, f.samples]));
    const dates = ['2026-01-05T12:00:00', '2026-01-05'];
    expect(samples).toEqual({
      'Format 14': dates,
      'Format 27': dates,
      'Format 30': dates,
      'Format 31': dates,
      'Format 36': dates,
      'Format 50': dates,
      'Format 57': dates,
      'Format 58': dates,
      // A time in Chinese Excel, a date in Japanese and Korean: the day and the time.
      'Format 56': dates,
      // h"時"mm"分" in every locale: a time of day, as h:mm.
      'Format 32': ['12:00:00', '00:00:00'],
    });
    // A format the file declares for such an id is the one read (SheetJS writes its own for 56, a time).
    const declared = declaring(withRow(styles(book, [56]), `<row r="2">${text('A2', 'Noon')}<c r="B2" s="1"><v>46027.5</v></c></row>`), 'A1:B2');
    expect((await upload(declared).expect(201)).body.fields[1].samples).toEqual(['12:00:00']);
  });
});
