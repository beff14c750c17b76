import fs from 'node:fs';
import path from 'node:path';
import type { MachineInfo } from './machine.js';
import type { Timing } from './stats.js';

export interface CreationResult {
  side: 'app' | 'raw';
  concurrency: number;
  timing: Timing;
  serverCpuMsPerCard: number | null;
  postgresCpuMsPerCard: number | null;
  clientCpuMsPerCard: number;
  machineBusy: number | null;
  /** Cores used meanwhile by processes other than the server, its database backends and the bench. */
  otherCores: number | null;
}

export interface ListingResult {
  name: string;
  page: number;
  onlyIds: boolean;
  app: Timing;
  raw: Timing;
  serverCpuMsPerRequest: number | null;
  otherCores: number | null;
}

export interface Results {
  machine: MachineInfo;
  settings: {
    createN: number;
    concurrencies: number[];
    warmupN: number;
    listCards: number;
    listRequests: number;
    listMaxSeconds: number;
    rounds: number;
    quietWait: number;
  };
  creation: CreationResult[];
  listing: ListingResult[];
  fillSeconds: number | null;
  statements: { createApp: number; createRaw: number; listApp: number | null; listRaw: number };
  totalSeconds: number;
}

export const BEGIN = '<!-- bench:results:begin (written by `npm run bench`; edits inside are overwritten) -->';
export const END = '<!-- bench:results:end -->';

const TARGET_RATIO = 0.5;
const TARGET_SEQUENTIAL = 500;
const TARGET_LIST_MS = 10;

const f = (n: number | null | undefined, d = 1) => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(d));
const int = (n: number) => Math.round(n).toLocaleString('en').replace(/,/g, ' ');
const pct = (n: number | null) => (n === null ? 'n/a' : `${Math.round(n * 100)} %`);

function rate(r: Results, side: 'app' | 'raw', c: number): number | undefined {
  return r.creation.find((x) => x.side === side && x.concurrency === c)?.timing.rate;
}

export function targets(r: Results): { name: string; target: string; measured: string; met: boolean | null }[] {
  const out: { name: string; target: string; measured: string; met: boolean | null }[] = [];
  const top = Math.max(...r.settings.concurrencies);
  const app = rate(r, 'app', top);
  const raw = rate(r, 'raw', top);
  if (app && raw) {
    out.push({
      name: `creation at concurrency ${top}, app / raw SQL`,
      target: `≥ ${TARGET_RATIO * 100} %`,
      measured: `${Math.round((app / raw) * 100)} % (${int(app)} / ${int(raw)} per s)`,
      met: app / raw >= TARGET_RATIO,
    });
  }
  const seq = rate(r, 'app', 1);
  if (seq) {
    out.push({
      name: 'sequential creation through the API',
      target: `≥ ${TARGET_SEQUENTIAL} per s`,
      measured: `${int(seq)} per s`,
      met: seq >= TARGET_SEQUENTIAL,
    });
  }
  for (const l of r.listing) {
    out.push({
      name: `listing, ${l.name} (page ${l.page}), ${int(r.settings.listCards)} cards`,
      target: `median < ${TARGET_LIST_MS} ms`,
      measured: `${f(l.app.medianMs, 2)} ms`,
      met: l.app.medianMs < TARGET_LIST_MS,
    });
  }
  return out;
}

export function resultsBlock(r: Results): string {
  const m = r.machine;
  const s = r.settings;
  const lines: string[] = [];
  lines.push(BEGIN, '');
  lines.push(`Run of ${m.date.slice(0, 10)} (${m.date}), commit ${m.commit}, ${f(r.totalSeconds, 0)} s in all.`, '');
  lines.push('| machine | |', '|---|---|');
  lines.push(`| CPU | ${m.cpus} × ${m.cpuModel} |`);
  lines.push(`| memory | ${m.memoryGiB} GiB |`);
  lines.push(`| load average (1 min) at start | ${f(m.loadAtStart, 2)} |`);
  lines.push(`| OS | ${m.os} |`);
  lines.push(`| Node.js | ${m.node} |`);
  lines.push(`| PostgreSQL | ${m.postgres.split(' on ')[0]} (same machine, 127.0.0.1) |`);
  lines.push(
    `| PostgreSQL settings | ${Object.entries(m.postgresSettings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')} |`,
  );
  lines.push('');

  lines.push('### Targets', '');
  lines.push('| target | wanted | measured | |', '|---|---|---|---|');
  for (const t of targets(r)) lines.push(`| ${t.name} | ${t.target} | ${t.measured} | ${t.met === null ? '' : t.met ? 'met' : '**missed**'} |`);
  lines.push('');

  lines.push('### Card creation', '');
  lines.push(
    `${int(s.createN)} creations per row, all children of the project's top-level card (the worst case: every ` +
      `creation locks the same parent row and the same project counter row), after a warm-up of ${int(s.warmupN)} per side. ` +
      `"app" is \`POST /api/1.0/cards/{top_level_card_id}/children\` over keep-alive HTTP; "raw" is the same transaction ` +
      `sent with \`pg\` (lock parent; next ref, position and insert in one statement; insert stream entry). Each side works on a ` +
      `project of its own that starts empty; the two sides run in ${s.rounds} alternating slices (app, raw, raw, app, …) so ` +
      `that both meet the same background load. CPU per card: the server process (/proc/<pid>/stat), the PostgreSQL ` +
      `backends of the scratch database, and the bench client itself. "Machine busy" is the share of all ${m.cpus} cores ` +
      `in use; "others" the cores used meanwhile by every other process, PostgreSQL's own background writers included ` +
      `(each measurement first waits up to ${s.quietWait} s for the machine to be idle; a high figure there makes the row pessimistic).`,
    '',
  );
  lines.push(
    '| side | concurrency | cards/s | median ms | p95 ms | server CPU ms/card | PostgreSQL CPU ms/card | client CPU ms/card | machine busy | others (cores) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const c of r.creation) {
    lines.push(
      `| ${c.side} | ${c.concurrency} | ${int(c.timing.rate)} | ${f(c.timing.medianMs, 2)} | ${f(c.timing.p95Ms, 2)} | ` +
        `${c.side === 'app' ? f(c.serverCpuMsPerCard, 3) : '–'} | ${f(c.postgresCpuMsPerCard, 3)} | ${f(c.clientCpuMsPerCard, 3)} | ${pct(c.machineBusy)} | ${f(c.otherCores, 2)} |`,
    );
  }
  lines.push('');
  for (const c of s.concurrencies) {
    const a = rate(r, 'app', c);
    const b = rate(r, 'raw', c);
    if (a && b) lines.push(`- app / raw at concurrency ${c}: **${Math.round((a / b) * 100)} %**`);
  }
  lines.push(
    `- SQL statements per creation: app ${f(r.statements.createApp, 1)}, raw ${r.statements.createRaw}` +
      (r.statements.listApp !== null ? `; per listing page: app ${f(r.statements.listApp, 1)}, raw ${r.statements.listRaw}` : '') +
      ' (counted on a second server instance behind a counting relay, not during the timed runs).',
  );
  lines.push('');

  if (r.listing.length) {
    lines.push('### Project listing', '');
    lines.push(
      `One project filled with raw SQL to ${int(s.listCards)} cards (${f(r.fillSeconds, 0)} s including \`VACUUM ANALYZE\`): ` +
        `about √N children of the top-level card, each with the rest spread evenly; refs, positions, ancestor paths, depths ` +
        `and the project counters as the app keeps them. \`GET /api/1.0/projects/{id}/cards?per_page=100\`, sequential requests ` +
        `(up to ${s.listRequests} per row, at most ${s.listMaxSeconds} s per side), beside the same page query sent with \`pg\`, ` +
        `in alternating slices as above.`,
      '',
    );
    lines.push(
      '| page | app median ms | app p95 ms | raw median ms | raw p95 ms | requests app / raw | server CPU ms/request | others (cores) |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const l of r.listing) {
      lines.push(
        `| ${l.name} (page ${l.page}${l.onlyIds ? ', only_ids=true' : ''}) | ${f(l.app.medianMs, 2)} | ${f(l.app.p95Ms, 2)} | ` +
          `${f(l.raw.medianMs, 2)} | ${f(l.raw.p95Ms, 2)} | ${l.app.count} / ${l.raw.count} | ${f(l.serverCpuMsPerRequest, 2)} | ${f(l.otherCores, 2)} |`,
      );
    }
    lines.push('');
  }
  lines.push(END);
  return lines.join('\n');
}

const SKELETON = (block: string) => `# Performance

Figures of \`npm run bench\` (issue 3, item 6). The block between the markers is
rewritten by every run; the rest of this file is prose.

## Running it

\`\`\`sh
npm install
DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench   # this URL is also the default
\`\`\`

${block}
`;

/** Rewrites the results block of the document, or writes the whole document when it has none. */
export function writeReport(file: string, r: Results): void {
  const block = resultsBlock(r);
  let text: string;
  if (fs.existsSync(file)) {
    const old = fs.readFileSync(file, 'utf8');
    const a = old.indexOf(BEGIN);
    const b = old.indexOf(END);
    text = a >= 0 && b > a ? old.slice(0, a) + block + old.slice(b + END.length) : `${old.trimEnd()}\n\n${block}\n`;
  } else {
    text = SKELETON(block);
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
