import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import XLSX from 'xlsx';
import { ClientGoneError } from '../../../shared/client-watch.js';
import { SpreadsheetTooLargeError, UnreadableSpreadsheetError } from '../domain/import.errors.js';
import { prototypePollutionXlsx, sheetFile, withSheetXml, writeZip, zipEntries, type Cell } from '../../../../test/support/spreadsheets.js';
import type { SheetRow } from './row-store.js';
import { SheetSandbox, WORKER_SOURCE } from './sheet-sandbox.js';
import { eastAsianDateFormats, lastRowNumber, sheetWindows } from './sheet-worker.js';

// A generous timeout: loading SheetJS in a fresh worker takes seconds on a busy machine.
const limits = { maxRows: 1000, maxColumns: 50, parseTimeoutMs: 30_000, workerHeapMb: 64, parallelParses: 2 };
const fixture = (name: string) => fileURLToPath(new URL(`../../../../test/fixtures/import/${name}`, import.meta.url));

async function parse(bytes: Buffer, sandbox = new SheetSandbox(limits)): Promise<SheetRow[]> {
  const rows: SheetRow[] = [];
  await sandbox.parse(bytes, (batch) => rows.push(...batch));
  return rows;
}

/** An ODS file of `rows` in which each cell whose text is a key of `cells` is that key's XML instead. */
function odsWith(rows: Cell[][], cells: Record<string, string>): Buffer {
  const cell = /<table:table-cell[^>]*>\s*<text:p>([A-Z]+)<\/text:p>\s*<\/table:table-cell>/g;
  const entries = zipEntries(sheetFile(rows, 'ods')).map((e) =>
    e.name === 'content.xml' ? { ...e, data: Buffer.from(e.data.toString('utf8').replace(cell, (xml, key: string) => cells[key] ?? xml)) } : e,
  );
  return writeZip(entries);
}

const sheetXml = (file: Buffer) => zipEntries(file).find((e) => e.name === 'xl/worksheets/sheet1.xml')!.data.toString('utf8');

/** The rows of `file` as the worker posts them, run as the sandbox starts it in a child process of the time zone `zone`. */
function parseIn(zone: string, file: Buffer): unknown {
  const script = `
    const { Worker } = require('node:worker_threads');
    const input = JSON.parse(process.env.SHEET_INPUT);
    input.bytes = new Uint8Array(Buffer.from(input.bytes, 'base64'));
    const worker = new Worker(process.env.SHEET_WORKER, { eval: true, workerData: input });
    const rows = [];
    worker.on('message', (m) => {
      if (m.type === 'rows') return rows.push(...m.rows);
      process.stdout.write(JSON.stringify(m.type === 'done' ? rows : m));
      worker.terminate();
    });`;
  const input = { bytes: file.toString('base64'), parserPath: createRequire(import.meta.url).resolve('xlsx/xlsx.mjs'), maxRows: 10, maxColumns: 10, batchRows: 100, windowBytes: 1 << 20 };
  const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, TZ: zone, SHEET_WORKER: WORKER_SOURCE, SHEET_INPUT: JSON.stringify(input) } });
  return JSON.parse(out.toString());
}

describe('SheetSandbox', () => {
  it('posts back plain string rows, dates as calendar dates', async () => {
    const file = sheetFile([['Title', 'Due', 'Done', 'N'], ['a', new Date(Date.UTC(2026, 0, 31)), true, 2.5], [], ['b']], 'xlsx');
    expect(await parse(file)).toEqual([['Title', 'Due', 'Done', 'N'], ['a', '2026-01-31', 'true', '2.5'], [], ['b']]);
  });

  it('posts time cells as times of day, not as dates of day 0 (1900-01-00)', async () => {
    // What Excel stores for `9:30` typed in a cell: a day fraction with a time format.
    const cell = (v: number, z: string) => ({ t: 'n', v, z });
    const sheet = XLSX.utils.aoa_to_sheet([
      ['Title', 'At', 'Long', 'Colored', 'Stamp', 'Midnight', 'Elapsed', 'Day', 'Later'],
      [
        'a',
        cell(0.395833333333, 'h:mm'),
        cell(0.75, 'hh:mm:ss AM/PM'),
        cell(0.5, '[Red][h]:mm:ss'),
        cell(0.5, 'yyyy-mm-dd hh:mm'),
        cell(0, 'hh:mm:ss'),
        cell(1.5, '[h]:mm:ss'),
        cell(46027, 'yyyy-mm-dd'),
        cell(46027.4375, 'h:mm'),
      ],
    ]);
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, sheet, 'Sheet1');
    const file = XLSX.write(book, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
    expect((await parse(file))[1]).toEqual([
      'a',
      '09:30:00',
      '18:00:00',
      '12:00:00',
      '12:00:00',
      '00:00:00',
      // A duration past a day is no time of day: as before.
      '1900-01-01T12:00:00',
      '2026-01-05',
      '10:30:00',
    ]);
  });

  it('posts error cells as their text, so a typed column names them as row problems instead of importing nothing', async () => {
    const file = sheetFile([['Title', 'N'], ['a', 'DIV'], ['NA', 1]], 'xlsx');
    const entries = zipEntries(file).map((e) =>
      e.name === 'xl/worksheets/sheet1.xml'
        ? {
            ...e,
            data: Buffer.from(
              e.data
                .toString('utf8')
                .replace(/<c r="B2"[^>]*>.*?<\/c>/, '<c r="B2" t="e"><f>1/0</f><v>#DIV/0!</v></c>')
                .replace(/<c r="A3"[^>]*>.*?<\/c>/, '<c r="A3" t="e"><v>#N/A</v></c>'),
            ),
          }
        : e,
    );
    expect(await parse(writeZip(entries))).toEqual([['Title', 'N'], ['a', '#DIV/0!'], ['#N/A', '1']]);
  });

  it('posts ODS dates as the calendar values they are, in a process of any time zone', () => {
    // As LibreOffice writes them: a day alone, or a day and a time, without a zone.
    const date = (value: string) => `<table:table-cell office:value-type="date" office:date-value="${value}"><text:p>x</text:p></table:table-cell>`;
    const file = odsWith([['Title', 'Day', 'Stamp', 'Zoned'], ['a', 'DAY', 'STAMP', 'ZONED']], {
      DAY: date('2026-01-05'),
      STAMP: date('2026-01-05T10:30:00'),
      ZONED: date('2026-07-01T00:00:00.000Z'),
    });
    for (const zone of ['America/New_York', 'Asia/Tokyo', 'UTC']) {
      expect([zone, parseIn(zone, file)]).toEqual([zone, [['Title', 'Day', 'Stamp', 'Zoned'], ['a', '2026-01-05', '2026-01-05T10:30:00', '2026-07-01']]]);
    }
  });

  it('posts ODS dates before 1900-03-01 as their calendar days (a plain day count, not Excel\'s 1900 system), in a process of any time zone', () => {
    const date = (value: string) => `<table:table-cell office:value-type="date" office:date-value="${value}"><text:p>x</text:p></table:table-cell>`;
    const days = ['1900-02-28', '1899-12-30', '1850-01-05', '1899-12-31T06:00:00', '1600-03-01T23:59:59'];
    const file = odsWith([['A', 'B', 'C', 'D', 'E'], ['V', 'W', 'X', 'Y', 'Z']], Object.fromEntries(days.map((d, i) => ['VWXYZ'[i], date(d)])));
    for (const zone of ['America/New_York', 'Europe/Paris', 'Asia/Kolkata', 'UTC']) {
      expect([zone, parseIn(zone, file)]).toEqual([zone, [['A', 'B', 'C', 'D', 'E'], days]]);
    }
  });

  it('posts ISO date cells (t="d") as calendar dates, with or without a date format, in a process of any time zone', () => {
    const dated = (ref: string, value: string) => `<c r="${ref}" t="d"><v>${value}</v></c>`;
    const cells = [
      dated('B2', '2026-01-05T00:00:00'),
      dated('C2', '2026-01-05T10:30:00'),
      dated('D2', '2026-01-05'),
      dated('E2', '2026-07-01T00:00:00.000Z'),
      dated('F2', '13:45:30'),
      dated('G2', 'soon'),
      '<c r="H2" t="d"/><c r="I2" t="d"></c>',
    ];
    const plain = withSheetXml(sheetFile([['Title', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H']], 'xlsx'), (xml) =>
      xml
        .replace('</sheetData>', `<row r="2"><c r="A2" t="inlineStr"><is><t>a</t></is></c>${cells.join('')}</row></sheetData>`)
        .replace(/<dimension[^>]*\/>/, '<dimension ref="A1:I2"/>'),
    );
    // As SheetJS writes a Date with cellDates: t="d", an instant in UTC, and a date format.
    const sheet = XLSX.utils.aoa_to_sheet([['Title', 'Due'], ['b', new Date(Date.UTC(2026, 0, 5))]], { cellDates: true });
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, sheet, 'Sheet1');
    const formatted = XLSX.write(book, { type: 'buffer', bookType: 'xlsx', cellDates: true }) as Buffer;
    expect(sheetXml(formatted)).toMatch(/<c r="B2" s="1" t="d"><v>2026-01-05T00:00:00.000Z<\/v><\/c>/);
    for (const zone of ['America/New_York', 'Asia/Tokyo', 'UTC']) {
      expect([zone, parseIn(zone, plain)]).toEqual([
        zone,
        [
          ['Title', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'],
          ['a', '2026-01-05', '2026-01-05T10:30:00', '2026-01-05', '2026-07-01', '13:45:30', 'soon'],
        ],
      ]);
      expect([zone, parseIn(zone, formatted)]).toEqual([zone, [['Title', 'Due'], ['b', '2026-01-05']]]);
    }
  });

  it('posts ISO date cells as calendar dates in a sheet read window by window', async () => {
    const rows: Cell[][] = [['Title', 'Due']];
    for (let i = 1; i <= 600; i++) rows.push([`row ${i}`, i]);
    const file = withSheetXml(sheetFile(rows, 'xlsx'), (xml) =>
      xml.replace(/<c r="B(\d+)"><v>(\d+)<\/v><\/c>/g, (_, r: string, n: string) => `<c r="B${r}" t="d"><v>2026-01-${String(1 + (Number(n) % 28)).padStart(2, '0')}T00:00:00</v></c>`),
    );
    const parsed = await parse(file, new SheetSandbox(limits, { windowBytes: 4096 }));
    expect(parsed).toHaveLength(601);
    expect(parsed[600]).toEqual(['row 600', `2026-01-${String(1 + (600 % 28)).padStart(2, '0')}`]);
    expect(parsed.slice(1).every(([, due]) => /^2026-01-\d\d$/.test(due))).toBe(true);
  });

  it('posts an ODS time cell as a time of day', async () => {
    const file = odsWith([['Title', 'At'], ['a', 'TIME']], {
      TIME: '<table:table-cell office:value-type="time" office:time-value="PT09H30M00S"><text:p>09:30</text:p></table:table-cell>',
    });
    expect(await parse(file)).toEqual([['Title', 'At'], ['a', '09:30:00']]);
  });

  it('refuses a sheet over the row or column cap without posting rows', async () => {
    const small = { ...limits, maxRows: 2 };
    await expect(parse(sheetFile([['a'], ['b'], ['c']], 'ods'), new SheetSandbox(small))).rejects.toThrow(/IMPORT_MAX_ROWS/);
    const narrow = { ...limits, maxColumns: 2 };
    await expect(parse(sheetFile([['a', 'b', 'c']], 'xlsx'), new SheetSandbox(narrow))).rejects.toThrow(/IMPORT_MAX_COLUMNS/);
  });

  it('refuses an XLSX sheet with a row past the cap that declares no <dimension>, which SheetJS would skip unseen', async () => {
    const sheet = XLSX.utils.aoa_to_sheet([['Title'], ['a'], ['b']]);
    sheet.A50 = { t: 's', v: 'far' };
    sheet['!ref'] = 'A1:A50';
    const book = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(book, sheet, 'Sheet1');
    const written = XLSX.write(book, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
    const entries = zipEntries(written).map((e) =>
      /worksheets\/sheet1\.xml$/.test(e.name) ? { ...e, data: Buffer.from(e.data.toString('utf8').replace(/<dimension[^>]*\/>/, '')) } : e,
    );
    const undeclared = writeZip(entries);
    expect(zipEntries(undeclared).some((e) => /<dimension/.test(e.data.toString('utf8')))).toBe(false);
    await expect(parse(undeclared, new SheetSandbox({ ...limits, maxRows: 10 }))).rejects.toThrow(/IMPORT_MAX_ROWS/);
    // Under the cap, the far row arrives, after the blank rows before it.
    const rows = await parse(undeclared, new SheetSandbox({ ...limits, maxRows: 50 }));
    expect(rows.length).toBe(50);
    expect(rows[49]).toEqual(['far']);
  });

  it('does not trust a declared <dimension> for rows: a huge one over a few rows imports them, a short one loses none', async () => {
    const file = sheetFile([['Title', 'N'], ['a', 1], [], ['b', 2]], 'xlsx');
    expect(sheetXml(file)).toMatch(/<dimension ref="A1:B4"\/>/);
    const huge = withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, '<dimension ref="A1:Z1048576"/>'));
    expect(await parse(huge)).toEqual([['Title', 'N'], ['a', '1'], [], ['b', '2']]);
    // A declared range within the cap posted its blank rows too; the sheet is as long as its rows.
    const long = withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, '<dimension ref="A1:B900"/>'));
    expect(await parse(long)).toHaveLength(4);
    // Row elements without cells after the last filled row are blank rows of the sheet, as before.
    const trailing = withSheetXml(file, (xml) => xml.replace('</sheetData>', '<row r="6"/></sheetData>'));
    expect(await parse(trailing)).toEqual([['Title', 'N'], ['a', '1'], [], ['b', '2'], [], []]);
    const short = withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, '<dimension ref="A1:B2"/>'));
    expect(await parse(short)).toEqual([['Title', 'N'], ['a', '1'], [], ['b', '2']]);
  });

  it('does not trust a declared <dimension> for columns, but refuses a real cell past the column cap', async () => {
    const file = sheetFile([['Title', 'N'], ['a', 1]], 'xlsx');
    const wide = withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, '<dimension ref="A1:ZZ2"/>'));
    expect(await parse(wide, new SheetSandbox({ ...limits, maxColumns: 2 }))).toEqual([['Title', 'N'], ['a', '1']]);
    // Column BZ (78th) written in a sheet that declares two columns.
    const far = withSheetXml(file, (xml) => xml.replace('</row></sheetData>', '<c r="BZ2" t="inlineStr"><is><t>far</t></is></c></row></sheetData>'));
    expect(sheetXml(far)).toMatch(/<dimension ref="A1:B2"\/>/);
    const error = await parse(far, new SheetSandbox({ ...limits, maxColumns: 50 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpreadsheetTooLargeError);
    expect((error as Error).message).toBe('The spreadsheet has 78 columns, more than 50 (limit set by IMPORT_MAX_COLUMNS)');
    expect((await parse(far, new SheetSandbox({ ...limits, maxColumns: 78 })))[1][77]).toBe('far');
  });

  it('refuses a real row past the cap whatever the sheet declares', async () => {
    const file = sheetFile([['Title'], ['a']], 'xlsx');
    const far = withSheetXml(file, (xml) => xml.replace('</sheetData>', '<row r="11"><c r="A11" t="inlineStr"><is><t>far</t></is></c></row></sheetData>'));
    for (const ref of ['A1:A2', 'A1:Z1048576']) {
      const declared = withSheetXml(far, (xml) => xml.replace(/<dimension[^>]*\/>/, `<dimension ref="${ref}"/>`));
      await expect(parse(declared, new SheetSandbox({ ...limits, maxRows: 10 }))).rejects.toThrow(/IMPORT_MAX_ROWS/);
      expect(await parse(declared, new SheetSandbox({ ...limits, maxRows: 11 }))).toEqual([['Title'], ['a'], ...Array(8).fill([]), ['far']]);
    }
  });

  it('counts rows as SheetJS does: a row without r follows the one before it, with any namespace prefix', () => {
    const xml = (rows: string) => Buffer.from(`<x:worksheet><x:sheetData>${rows}</x:sheetData><x:rowBreaks/></x:worksheet>`);
    expect(lastRowNumber(xml('<x:row r="3"><x:c/></x:row><x:row><x:c/></x:row><x:row/>'))).toBe(5);
    expect(lastRowNumber(xml('<row r="7" spans="1:2"></row>'))).toBe(7);
    expect(lastRowNumber(xml(''))).toBe(0);
    // A tag cut by the end of a 1 MiB slice is read once, whole.
    const filler = '<row r="1"/>'.padEnd((1 << 20) - 5, ' ');
    expect(lastRowNumber(Buffer.from(`${filler}<row r="2000001"></row><row></row>`))).toBe(2000002);
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
    const sandbox = new SheetSandbox(limits, { parserPath: fixture('polluting-parser.cjs') });
    await expect(parse(sheetFile([['a']], 'xlsx'), sandbox)).rejects.toThrow(UnreadableSpreadsheetError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('terminates a parser that never returns at the wall-clock timeout', async () => {
    const started = Date.now();
    const sandbox = new SheetSandbox({ ...limits, parseTimeoutMs: 500 }, { parserPath: fixture('spinning-parser.cjs') });
    await expect(parse(Buffer.from('x'), sandbox)).rejects.toThrow(/longer than 500 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('stops a parser at its heap cap', async () => {
    const sandbox = new SheetSandbox({ ...limits, parseTimeoutMs: 20_000 }, { parserPath: fixture('hungry-parser.cjs') });
    const error = await parse(Buffer.from('x'), sandbox).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpreadsheetTooLargeError);
    expect((error as Error).message).toMatch(/IMPORT_WORKER_HEAP_MB/);
  });

  it('lets only `parallelParses` workers run at once', async () => {
    const sandbox = new SheetSandbox({ ...limits, parallelParses: 1, parseTimeoutMs: 400 }, { parserPath: fixture('spinning-parser.cjs') });
    const started = Date.now();
    const results = await Promise.allSettled([parse(Buffer.from('x'), sandbox), parse(Buffer.from('x'), sandbox)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });

  it('stops a parse whose client went away, and gives its slot to the next at once', async () => {
    const sandbox = new SheetSandbox({ ...limits, parallelParses: 1, parseTimeoutMs: 1500 }, { parserPath: fixture('spinning-parser.cjs') });
    const gone = new AbortController();
    const queuedGone = new AbortController();
    const started = Date.now();
    const running = sandbox.parse(Buffer.from('x'), () => undefined, gone.signal).catch((e: unknown) => e);
    // Waits for the one slot, and its client leaves too: it never parses.
    const queued = sandbox.parse(Buffer.from('x'), () => undefined, queuedGone.signal).catch((e: unknown) => e);
    setTimeout(() => queuedGone.abort(), 100);
    setTimeout(() => gone.abort(), 300);
    const [runningError, queuedError] = await Promise.all([running, queued]);
    expect(runningError).toBeInstanceOf(ClientGoneError);
    expect(queuedError).toBeInstanceOf(ClientGoneError);
    // Stopped at the abort, not at the 1.5 s timeout.
    expect(Date.now() - started).toBeLessThan(1200);
    // The slot is free again: the next parse runs (to the timeout, this parser never ends).
    await expect(sandbox.parse(Buffer.from('x'), () => undefined)).rejects.toThrow(/longer than 1500 ms/);
    // A parse whose client had left before it asked never starts.
    await expect(sandbox.parse(Buffer.from('x'), () => undefined, AbortSignal.abort())).rejects.toThrow(ClientGoneError);
  });
});

/** Rows of every kind of cell, with blank rows and gaps between cells, `n` of them after the header. */
function variedRows(n: number, label = 'row'): Cell[][] {
  const rows: Cell[][] = [['Title', 'N', 'Due', 'Done', 'Notes']];
  for (let i = 1; i <= n; i++) {
    if (i % 97 === 0) rows.push([]);
    else rows.push([`${label} ${i} & <ü>`, i % 7 ? i / 4 : null, new Date(Date.UTC(2026, i % 12, 1 + (i % 28))), i % 3 === 0, i % 5 ? `note ${i}` : null]);
  }
  return rows;
}

const worksheetPart = (file: Buffer, name = 'xl/worksheets/sheet1.xml') => zipEntries(file).find((e) => e.name === name)!.data;

describe('SheetSandbox, a worksheet larger than a window', () => {
  const roomy = { ...limits, maxRows: 10_000 };
  const windowed = (extra: Partial<typeof limits> = {}) => new SheetSandbox({ ...roomy, ...extra }, { windowBytes: 4096 });

  it('is cut only between rows that carry their number', () => {
    const part = worksheetPart(sheetFile(variedRows(1500), 'xlsx'));
    const windows = sheetWindows(part, 4096)!;
    expect(windows.cuts.length).toBeGreaterThan(10);
    for (const cut of windows.cuts.slice(1, -1)) expect(part.toString('latin1', cut, cut + 8)).toBe('<row r="');
    expect(sheetWindows(part, part.length)).toBeNull();
  });

  it('reads, window by window, the rows it reads at once, texts inline or shared', async () => {
    for (const sharedStrings of [false, true]) {
      const file = sheetFile(variedRows(1500), 'xlsx', { sharedStrings });
      const whole = await parse(file, new SheetSandbox(roomy));
      expect(whole).toHaveLength(1501);
      expect(await parse(file, windowed())).toEqual(whole);
    }
  });

  it('reads the first sheet of the workbook, not another large one', async () => {
    const file = sheetFile(variedRows(800, 'first'), 'xlsx', { more: [variedRows(900, 'second')] });
    const rows = await parse(file, windowed());
    expect(rows).toEqual(await parse(file, new SheetSandbox(roomy)));
    expect(rows[1][0]).toBe('first 1 & <ü>');
  });

  it('leaves rows without numbers whole, and cuts before the numbered ones', async () => {
    const file = sheetFile(variedRows(1500), 'xlsx');
    const strip = (from: number) => (xml: string) => {
      let row = 0;
      return xml.replace(/<row r="\d+"/g, (tag) => (++row >= from ? '<row' : tag));
    };
    for (const from of [1, 700]) {
      const entries = zipEntries(file).map((e) =>
        e.name === 'xl/worksheets/sheet1.xml' ? { ...e, data: Buffer.from(strip(from)(e.data.toString('utf8'))) } : e,
      );
      const stripped = writeZip(entries);
      const part = worksheetPart(stripped);
      const cuts = sheetWindows(part, 4096)?.cuts ?? [];
      for (const cut of cuts.slice(1, -1)) expect(part.toString('latin1', cut, cut + 8)).toBe('<row r="');
      expect(await parse(stripped, windowed())).toEqual(await parse(stripped, new SheetSandbox(roomy)));
    }
  });

  it('reads a sheet declaring a huge range window by window as it reads it without one', async () => {
    const file = sheetFile(variedRows(1500), 'xlsx');
    const huge = withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, '<dimension ref="A1:Z1048576"/>'));
    const undeclared = withSheetXml(file, (xml) => xml.replace(/<dimension[^>]*\/>/, ''));
    const rows = await parse(huge, windowed());
    expect(rows).toHaveLength(1501);
    expect(rows).toEqual(await parse(undeclared, windowed()));
    expect(rows).toEqual(await parse(file, new SheetSandbox(roomy)));
  });

  it('refuses a window SheetJS cannot read, naming its cell, rather than leaving its rows out', async () => {
    const file = withSheetXml(sheetFile(variedRows(1500), 'xlsx', { sharedStrings: true }), (xml) =>
      xml.replace(/<row r="1400"[^>]*>/, (row) => `${row}<c r="F1400" t="s"><v>100000</v></c>`),
    );
    await expect(parse(file, windowed())).rejects.toThrow(/^The spreadsheet cannot be read: cell F1400 names shared string "100000", but the workbook's shared-strings part holds \d+$/);
  });

  it('refuses a sheet over the row cap in whichever window passes it', async () => {
    await expect(parse(sheetFile(variedRows(1500), 'xlsx'), windowed({ maxRows: 1200 }))).rejects.toThrow(/IMPORT_MAX_ROWS/);
  });
});

describe('eastAsianDateFormats', () => {
  const declared = (xml: string) => eastAsianDateFormats(Buffer.from(xml)).toString('latin1');

  it("declares ids 27-36 and 50-58 before the part's own formats, or in a numFmts of their own", () => {
    const own = declared('<styleSheet><numFmts count="1"><numFmt numFmtId="27" formatCode="h:mm"/></numFmts><cellXfs/></styleSheet>');
    const first = '<styleSheet><numFmts count="1"><numFmt numFmtId="27" formatCode="yyyy-mm-dd"/>';
    expect(own.startsWith(first)).toBe(true);
    expect(own).toContain('<numFmt numFmtId="58" formatCode="yyyy-mm-dd"/><numFmt numFmtId="27" formatCode="h:mm"/></numFmts><cellXfs/>');
    expect(own).toContain('<numFmt numFmtId="32" formatCode="h:mm:ss"/>');
    const prefixed = declared('<x:styleSheet xmlns:x="s"><x:cellXfs/></x:styleSheet>');
    expect(prefixed).toMatch(/^<x:styleSheet xmlns:x="s"><numFmts><numFmt numFmtId="27" .*<\/numFmts><x:cellXfs\/>/);
    expect(declared('<styleSheet/>')).toBe('<styleSheet/>');
  });
});
