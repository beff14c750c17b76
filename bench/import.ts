/**
 * `npm run bench:import`: the spreadsheet importer (issue 11) on real
 * PostgreSQL. A 100 000-row CSV and XLSX go through discover and import on the
 * built server; beside them, the same rows are inserted with COPY into the
 * same tables, in the same run. Reports rows/s and the server's peak RSS, and
 * rewrites the importer block of docs/PERFORMANCE.md.
 * Database: `bench_import` on the server in DATABASE_URL (created and dropped).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import XLSX from 'xlsx';
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from './raw-sql.js';
import { createUser, startServer, type RunningServer } from './server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVER_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = 'bench_import';
const ROWS = Number(process.env.BENCH_IMPORT_ROWS || 100_000);
// Diagnosis only (never for the figures): settings for the scratch database's sessions, e.g.
// "log_min_duration_statement=0", and the formats to run ("csv", "xlsx" or both).
const DB_SETTINGS = (process.env.BENCH_IMPORT_DB_SETTINGS ?? '').split(/\s+/).filter(Boolean);
const FORMATS = (process.env.BENCH_IMPORT_FORMATS ?? 'csv,xlsx').split(',') as Array<'csv' | 'xlsx'>;
/** Rows of each mapping-type import (a CSV of a title and one column of that type). */
const TYPE_ROWS = Number(process.env.BENCH_IMPORT_TYPE_ROWS || 10_000);
const DOC = process.env.BENCH_DOC ?? path.join(ROOT, 'docs/PERFORMANCE.md');
const BEGIN = '<!-- bench:import:begin (written by `npm run bench:import`; edits inside are overwritten) -->';
const END = '<!-- bench:import:end -->';

const log = (msg: string) => process.stderr.write(`[bench:import] ${msg}\n`);

/** Title, a number, a text and a date per row: what an ordinary task list holds. */
function sheetRows(n: number): Array<Array<string | number>> {
  const rows: Array<Array<string | number>> = [['Title', 'Estimate', 'Notes', 'Due']];
  for (let i = 1; i <= n; i++) {
    rows.push([`Task ${i}`, i % 13, `Notes for task ${i}: a sentence of ordinary length.`, `2026-0${1 + (i % 9)}-1${i % 10}`]);
  }
  return rows;
}

function file(rows: Array<Array<string | number>>, bookType: 'csv' | 'xlsx'): Buffer {
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(rows), 'Tasks');
  return XLSX.write(book, { type: 'buffer', bookType, compression: true }) as Buffer;
}

/** The server's resident set, sampled every 20 ms, and the kernel's high-water mark (reset before each phase). */
class RssWatch {
  private peak = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pid: number) {}

  private read(field: 'VmRSS' | 'VmHWM'): number {
    const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return m ? Number(m[1]) * 1024 : 0;
  }

  start(): void {
    try {
      fs.writeFileSync(`/proc/${this.pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    } catch {
      // not permitted: the sampled peak still counts
    }
    this.peak = this.read('VmRSS');
    this.timer = setInterval(() => (this.peak = Math.max(this.peak, this.read('VmRSS'))), 20);
  }

  stop(): number {
    clearInterval(this.timer);
    return Math.max(this.peak, this.read('VmHWM'));
  }
}

interface Phase {
  seconds: number;
  peakRss: number;
}

interface FormatResult {
  format: 'csv' | 'xlsx';
  bytes: number;
  discover: Phase;
  importing: Phase;
  report: Record<string, unknown>;
}

class Api {
  constructor(
    private readonly port: number,
    private readonly key: string,
  ) {}

  async call(method: string, route: string, body?: unknown | FormData): Promise<Record<string, unknown>> {
    const form = body instanceof FormData;
    const res = await fetch(`http://127.0.0.1:${this.port}/api/1.0${route}`, {
      method,
      headers: { 'x-api-key': this.key, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : form ? (body as FormData) : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as Record<string, unknown>;
  }
}

async function timed<T>(watch: RssWatch, work: () => Promise<T>): Promise<{ value: T; phase: Phase }> {
  watch.start();
  const t0 = process.hrtime.bigint();
  const value = await work();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { value, phase: { seconds, peakRss: watch.stop() } };
}

async function importFormat(api: Api, watch: RssWatch, org: number, format: 'csv' | 'xlsx', bytes: Buffer): Promise<FormatResult> {
  const project = await api.call('POST', `/organizations/${org}/projects`, { title: `Import ${format}` });
  const form = new FormData();
  form.append('file', new Blob([bytes]), `tasks.${format}`);
  const discover = await timed(watch, () => api.call('POST', '/importers/spreadsheet/discover', form));
  log(`${format}: discover ${discover.phase.seconds.toFixed(2)} s`);
  const importing = await timed(watch, () =>
    api.call('POST', '/importers/spreadsheet/import', {
      discover_file_id: discover.value.file_id,
      project_id: project.id,
      options: { ignore_header: true },
      mapping: {
        '0': { type: 'title' },
        '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
        '2': { type: 'attribute', attr_type: 'text', name: 'Notes' },
        '3': { type: 'attribute', attr_type: 'date', name: 'Due' },
      },
    }),
  );
  log(`${format}: import ${importing.phase.seconds.toFixed(2)} s ${JSON.stringify(importing.value)}`);
  if (importing.value.created !== ROWS) throw new Error(`${format}: created ${String(importing.value.created)}, expected ${ROWS}`);
  return { format, bytes: bytes.length, discover: discover.phase, importing: importing.phase, report: importing.value };
}

/** One column of each mapping type beside the title: the cell of row i, and its mapping. */
const MAPPING_TYPES: Record<string, { cell: (i: number) => string; spec?: Record<string, unknown> }> = {
  'title only': { cell: () => '' },
  number: { cell: (i) => String(i % 13), spec: { type: 'attribute', attr_type: 'number', name: 'Estimate' } },
  'context (2 groups)': { cell: (i) => `L${i % 20}, M${i % 7}`, spec: { type: 'context', name: 'Labels' } },
  comment: { cell: (i) => `comment on task ${i}`, spec: { type: 'comment' } },
  'model (every other row)': { cell: (i) => (i % 2 ? 'Bug' : ''), spec: { type: 'model' } },
  'children (2)': { cell: (i) => `step ${i}a\nstep ${i}b`, spec: { type: 'children' } },
};

interface TypeResult {
  type: string;
  createSeconds: number;
  /** Matching the cards the creating import made, by title; undefined for children (an update adds more). */
  updateSeconds?: number;
}

/**
 * Each mapping type alone beside the title, `TYPE_ROWS` CSV rows into a
 * fresh project: created, then imported again as an update matched by
 * title (what each type costs against "title only" of the same run).
 */
async function importMappingTypes(api: Api, org: number): Promise<TypeResult[]> {
  const results: TypeResult[] = [];
  for (const [type, { cell, spec }] of Object.entries(MAPPING_TYPES)) {
    const project = await api.call('POST', `/organizations/${org}/projects`, { title: `Type ${type}` });
    await api.call('POST', `/projects/${project.id}/models`, { name: 'Bug' });
    const lines = ['Title,Column'];
    for (let i = 1; i <= TYPE_ROWS; i++) lines.push(`Task ${i},${JSON.stringify(cell(i))}`);
    const upload = async () => {
      const form = new FormData();
      form.append('file', new Blob([lines.join('\n')]), 'types.csv');
      return (await api.call('POST', '/importers/spreadsheet/discover', form)).file_id;
    };
    const body = async (update: boolean) => ({
      discover_file_id: await upload(),
      project_id: project.id,
      options: { ignore_header: true },
      mapping: { '0': { type: 'title' }, ...(spec ? { '1': spec } : {}) },
      ...(update ? { update_field: 'title' } : {}),
    });
    const seconds = async (update: boolean) => {
      const request = await body(update);
      const t0 = process.hrtime.bigint();
      await api.call('POST', '/importers/spreadsheet/import', request);
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    const createSeconds = await seconds(false);
    const updateSeconds = type.startsWith('children') ? undefined : await seconds(true);
    log(`type ${type}: create ${createSeconds.toFixed(2)} s, update ${updateSeconds?.toFixed(2) ?? '-'} s`);
    results.push({ type, createSeconds, updateSeconds });
  }
  return results;
}

function typeLines(types: TypeResult[]): string[] {
  const base = types.find((t) => t.type === 'title only')!;
  const rate = (seconds: number) => Math.round(TYPE_ROWS / seconds);
  const share = (seconds: number, baseSeconds: number) => `${Math.round((baseSeconds / seconds) * 100)} %`;
  const lines = [
    '',
    `Each mapping type alone beside the title: ${TYPE_ROWS} CSV rows into a fresh project, created, then imported`,
    'again as an update matched by title; "vs title only" is the rate against the title-only import of this run.',
    '',
    '| column | create rows/s | vs title only | update rows/s | vs title only |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const t of types) {
    const update = t.updateSeconds === undefined ? '– | –' : `${rate(t.updateSeconds)} | ${share(t.updateSeconds, base.updateSeconds!)}`;
    lines.push(`| ${t.type} | ${rate(t.createSeconds)} | ${share(t.createSeconds, base.createSeconds)} | ${update} |`);
  }
  return lines;
}

/**
 * The baseline: the same cards and values written with COPY into the same
 * tables (cards.cards, fields.scalar_values) of a fresh project, refs and
 * positions computed by the client, in one transaction. No stream entries,
 * no checks: the floor an import cannot go below.
 */
async function copyBaseline(url: string, api: Api, org: number, rows: Array<Array<string | number>>): Promise<number> {
  const project = await api.call('POST', `/organizations/${org}/projects`, { title: 'COPY baseline' });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const fields: number[] = [];
    for (const [name, type] of [['Estimate', 'number'], ['Notes', 'text'], ['Due', 'date']]) {
      fields.push((await api.call('POST', `/projects/${project.id}/attributes`, { name, type })).id as number);
    }
    const t0 = process.hrtime.bigint();
    await client.query('BEGIN');
    const root = Number(project.top_level_card_id);
    const { rows: ids } = await client.query(
      `SELECT nextval(pg_get_serial_sequence('cards.cards', 'id')) AS id FROM generate_series(1, $1)`,
      [rows.length - 1],
    );
    const cardLines: string[] = [];
    const valueLines: string[] = [];
    const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
    rows.slice(1).forEach((r, i) => {
      const id = ids[i].id as string;
      cardLines.push([id, project.id, org, root, `{${root}}`, i + 1, esc(String(r[0])), i, 1].join('\t'));
      valueLines.push([id, fields[0], JSON.stringify(r[1])].join('\t'));
      valueLines.push([id, fields[1], esc(JSON.stringify(r[2]))].join('\t'));
      valueLines.push([id, fields[2], JSON.stringify(r[3])].join('\t'));
    });
    await copy(client, 'COPY cards.cards (id, project_id, organization_id, parent_id, ancestor_ids, ref, title, position, depth) FROM STDIN', cardLines);
    await copy(client, 'COPY fields.scalar_values (card_id, attribute_id, value) FROM STDIN', valueLines);
    await client.query('COMMIT');
    return Number(process.hrtime.bigint() - t0) / 1e9;
  } finally {
    await client.end();
  }
}

function copy(client: pg.Client, sql: string, lines: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    const chunk = 5000;
    for (let i = 0; i < lines.length; i += chunk) stream.write(lines.slice(i, i + chunk).join('\n') + '\n');
    stream.end();
  });
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
/** Peak RSS in MB (10^6 bytes), the unit of issue 11's target, in every table. */
const megabytes = (bytes: number) => (bytes / 1e6).toFixed(0);

function block(results: FormatResult[], copySeconds: number, types: TypeResult[], when: string): string {
  const copyRate = ROWS / copySeconds;
  const lines = [
    BEGIN,
    '',
    `Run of ${when}: ${ROWS} rows of 4 columns (title, number, text, date), imported into a fresh project with`,
    '`ignore_header`; the fields are created by the import. Server: the built `dist/src/main.js` on PostgreSQL',
    '(same machine, 2 cores). Peak RSS is the server process, worker threads included, during that step.',
    '',
    '| step | file | time | rows/s | peak RSS of the server |',
    '|---|---|---|---|---|',
  ];
  for (const r of results) {
    lines.push(`| ${r.format.toUpperCase()} discover | ${mb(r.bytes)} MiB | ${r.discover.seconds.toFixed(2)} s | ${Math.round(ROWS / r.discover.seconds)} | ${megabytes(r.discover.peakRss)} MB |`);
    lines.push(`| ${r.format.toUpperCase()} import | | ${r.importing.seconds.toFixed(2)} s | ${Math.round(ROWS / r.importing.seconds)} | ${megabytes(r.importing.peakRss)} MB |`);
    const both = r.discover.seconds + r.importing.seconds;
    lines.push(`| ${r.format.toUpperCase()} discover + import | | ${both.toFixed(2)} s | ${Math.round(ROWS / both)} | |`);
  }
  lines.push(`| COPY baseline (cards + values) | | ${copySeconds.toFixed(2)} s | ${Math.round(copyRate)} | |`);
  lines.push(...typeLines(types));
  lines.push('');
  lines.push('| target | measured | met |');
  lines.push('|---|---|---|');
  const csv = results.find((r) => r.format === 'csv');
  if (csv) {
    const csvRate = ROWS / csv.importing.seconds;
    lines.push(`| CSV import ≥ 10 000 rows/s | ${Math.round(csvRate)} rows/s | ${csvRate >= 10_000 ? 'yes' : 'no'} |`);
  }
  for (const r of results) {
    const share = ROWS / r.importing.seconds / copyRate;
    lines.push(`| ${r.format.toUpperCase()} import ≥ 25 % of COPY | ${(share * 100).toFixed(0)} % | ${share >= 0.25 ? 'yes' : 'no'} |`);
    const peak = Math.max(r.discover.peakRss, r.importing.peakRss);
    lines.push(`| ${r.format.toUpperCase()} peak RSS < 300 MB | ${megabytes(peak)} MB | ${peak < 300e6 ? 'yes' : 'no'} |`);
  }
  lines.push('', END);
  return lines.join('\n');
}

function writeDoc(text: string): void {
  if (DOC === '-') return; // `BENCH_DOC=-`: no file is written, as with npm run bench
  const doc = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '';
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start !== -1 && end !== -1) fs.writeFileSync(DOC, doc.slice(0, start) + text + doc.slice(end + END.length));
  else fs.writeFileSync(DOC, `${doc.trimEnd()}\n\n## Spreadsheet import (issue 11)\n\n${text}\n`);
}

async function main(): Promise<void> {
  await dropScratchDatabase(SERVER_URL, DB).catch(() => undefined);
  await createScratchDatabase(SERVER_URL, DB);
  const url = databaseUrl(SERVER_URL, DB);
  if (DB_SETTINGS.length) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    for (const setting of DB_SETTINGS) {
      const [name, value] = setting.split('=');
      await admin.query(`ALTER DATABASE ${DB} SET ${name} = '${value}'`);
    }
    await admin.end();
  }
  let server: RunningServer | undefined;
  try {
    server = await startServer(ROOT, url);
    const user = createUser(ROOT, url, 'bench');
    const api = new Api(server.port, user.api_key);
    const org = (await api.call('POST', '/organizations', { name: 'Bench' })).id as number;
    const rows = sheetRows(ROWS);
    const watch = new RssWatch(server.pid);
    const results: FormatResult[] = [];
    for (const format of FORMATS) results.push(await importFormat(api, watch, org, format, file(rows, format)));
    const copySeconds = await copyBaseline(url, api, org, rows);
    log(`COPY baseline ${copySeconds.toFixed(2)} s`);
    const types = await importMappingTypes(api, org);
    const text = block(results, copySeconds, types, new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC');
    process.stdout.write(`${text}\n`);
    writeDoc(text);
  } finally {
    await server?.stop();
    // BENCH_KEEP_DB=1 keeps the database for a look at plans afterwards (the next run drops it first).
    if (!process.env.BENCH_KEEP_DB) await dropScratchDatabase(SERVER_URL, DB).catch(() => undefined);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
