import fs from 'node:fs';
import path from 'node:path';
import type { MachineInfo } from './machine.js';
import type { Timing } from './stats.js';
import type { SmallMoveResult, SubtreeResult } from './subtree.js';

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
  /** Reached with `cursor=` (keyset) instead of `page`. */
  cursor: boolean;
  app: Timing;
  raw: Timing;
  serverCpuMsPerRequest: number | null;
  otherCores: number | null;
}

export interface AttributeResult {
  app: Timing;
  raw: Timing;
  serverCpuMsPerRequest: number;
}

/** A request that does (almost) nothing: the server's own cost per request. */
export interface FloorResult {
  path: string;
  timing: Timing;
  serverCpuMsPerRequest: number;
}

export interface Results {
  machine: MachineInfo;
  settings: {
    createN: number;
    concurrencies: number[];
    warmupN: number;
    listCards: number;
    listRequests: number;
    listWarmup: number;
    listWarmupSeconds: number;
    listMaxSeconds: number;
    rounds: number;
    quietWait: number;
    attributeN: number;
    attributeWarmup: number;
    floorWarmup: number;
    quick: boolean;
  };
  creation: CreationResult[];
  attribute: AttributeResult | null;
  floor: FloorResult[];
  listing: ListingResult[];
  subtrees: SubtreeResult[];
  smallMove: SmallMoveResult | null;
  fillSeconds: number | null;
  /** 1-minute load average when the run ended (the start's is in machine). */
  loadAtEnd: number;
  statements: {
    createApp: number;
    createRaw: number;
    setAttributeApp: number;
    setAttributeRaw: number;
    listApp: number | null;
    cursorListApp: number | null;
    listRaw: number;
  };
  totalSeconds: number;
}

export const BEGIN = '<!-- bench:results:begin (written by `npm run bench`; edits inside are overwritten) -->';
export const END = '<!-- bench:results:end -->';

/** Targets of issue 15. */
const TARGET = {
  createC1: 0.7,
  createC16: 0.75,
  serverCpuMsPerCard: 0.8,
  extraStatements: 1,
  setAttribute: 0.6,
  firstPageRatio: 2,
  listStatements: 2,
  listServerCpuMs: 1,
  cursorMs: 10,
  subtreeSpread: 2,
  smallMoveGrowth: 1.5,
};

const f = (n: number | null | undefined, d = 1) => (n === null || n === undefined || !Number.isFinite(n) ? 'n/a' : n.toFixed(d));
const int = (n: number) => Math.round(n).toLocaleString('en').replace(/,/g, ' ');
const pct = (n: number | null) => (n === null ? 'n/a' : `${Math.round(n * 100)} %`);

function rate(r: Results, side: 'app' | 'raw', c: number): number | undefined {
  return r.creation.find((x) => x.side === side && x.concurrency === c)?.timing.rate;
}

type Target = { name: string; target: string; measured: string; met: boolean | null };

const firstPage = (r: Results) => r.listing.find((l) => l.page === 1 && !l.onlyIds && !l.cursor);
const cursorPage = (r: Results) => r.listing.find((l) => l.cursor && !l.onlyIds);
const subtreeSpread = (r: Results) => {
  const per = r.subtrees.map((s) => s.msPerCard);
  return per.length > 1 ? Math.max(...per) / Math.min(...per) : null;
};

export function targets(r: Results): Target[] {
  const out: Target[] = [];
  for (const [c, wanted] of [[1, TARGET.createC1], [16, TARGET.createC16]] as const) {
    const app = rate(r, 'app', c);
    const raw = rate(r, 'raw', c);
    if (!app || !raw) continue;
    out.push({ name: `creation at concurrency ${c}, app / raw SQL`, target: `≥ ${wanted * 100} %`, measured: `${Math.round((app / raw) * 100)} % (${int(app)} / ${int(raw)} per s)`, met: app / raw >= wanted });
  }
  const cpu = r.creation.find((c) => c.side === 'app' && c.concurrency === 1)?.serverCpuMsPerCard;
  if (cpu !== undefined && cpu !== null) {
    out.push({ name: 'server CPU per created card (concurrency 1)', target: `≤ ${TARGET.serverCpuMsPerCard} ms`, measured: `${f(cpu, 3)} ms`, met: cpu <= TARGET.serverCpuMsPerCard });
  }
  const st = r.statements;
  out.push({ name: 'SQL statements per creation', target: `≤ raw + ${TARGET.extraStatements} (${st.createRaw + TARGET.extraStatements})`, measured: `${f(st.createApp, 2)}`, met: perRequest(st.createApp) <= st.createRaw + TARGET.extraStatements });
  if (r.attribute) {
    const ratio = r.attribute.app.rate / r.attribute.raw.rate;
    out.push({ name: 'setting one attribute, app / raw SQL', target: `≥ ${TARGET.setAttribute * 100} %`, measured: `${Math.round(ratio * 100)} % (${int(r.attribute.app.rate)} / ${int(r.attribute.raw.rate)} per s)`, met: ratio >= TARGET.setAttribute });
  }
  const first = firstPage(r);
  if (first) {
    const ratio = first.app.medianMs / first.raw.medianMs;
    out.push({ name: `first page of 100, ${int(r.settings.listCards)} cards, app / raw SQL (median)`, target: `≤ ${TARGET.firstPageRatio}×`, measured: `${f(ratio, 2)}× (${f(first.app.medianMs, 2)} / ${f(first.raw.medianMs, 2)} ms)`, met: ratio <= TARGET.firstPageRatio });
    out.push({ name: 'server CPU per listing page', target: `≤ ${TARGET.listServerCpuMs} ms`, measured: `${f(first.serverCpuMsPerRequest, 2)} ms`, met: (first.serverCpuMsPerRequest ?? Infinity) <= TARGET.listServerCpuMs });
  }
  if (st.listApp !== null) {
    out.push({ name: 'SQL statements per listing page', target: `≤ ${TARGET.listStatements}`, measured: `${f(st.listApp, 2)}`, met: perRequest(st.listApp) <= TARGET.listStatements });
  }
  const cursor = cursorPage(r);
  if (cursor) {
    out.push({ name: `page ${cursor.page} by cursor, median`, target: `≤ ${TARGET.cursorMs} ms`, measured: `${f(cursor.app.medianMs, 2)} ms`, met: cursor.app.medianMs <= TARGET.cursorMs });
  }
  const spread = subtreeSpread(r);
  if (spread !== null) {
    out.push({ name: `subtree move+archive+restore+delete, time per card across ${r.subtrees.map((s) => int(s.size)).join(' / ')} cards`, target: `within ${TARGET.subtreeSpread}×`, measured: `${f(spread, 2)}× (${r.subtrees.map((s) => f(s.msPerCard, 3)).join(' / ')} ms per card)`, met: spread <= TARGET.subtreeSpread });
  }
  if (r.smallMove) {
    const growth = r.smallMove.bigProjectMs / r.smallMove.smallProjectMs;
    out.push({ name: 'moving a 10-card subtree, big project / small project (median)', target: `≤ ${TARGET.smallMoveGrowth}× (not slower)`, measured: `${f(growth, 2)}× (${f(r.smallMove.bigProjectMs, 2)} / ${f(r.smallMove.smallProjectMs, 2)} ms)`, met: growth <= TARGET.smallMoveGrowth });
  }
  return out;
}

/** The figures of a run as flat JSON (BENCH_JSON), the keys issue 15 names first. */
export function benchJson(r: Results): Record<string, unknown> {
  const ratio = (c: number) => {
    const a = rate(r, 'app', c);
    const b = rate(r, 'raw', c);
    return a && b ? a / b : null;
  };
  const first = firstPage(r);
  const cursor = cursorPage(r);
  return {
    create_c1_ratio: ratio(1),
    create_c16_ratio: ratio(16),
    server_cpu_ms_per_card: r.creation.find((c) => c.side === 'app' && c.concurrency === 1)?.serverCpuMsPerCard ?? null,
    statements_per_create: r.statements.createApp,
    raw_statements_per_create: r.statements.createRaw,
    list_first_page_ratio: first ? first.app.medianMs / first.raw.medianMs : null,
    cursor_page_5000_p50_ms: cursor?.app.medianMs ?? null,
    subtree_ms_per_card: Object.fromEntries(r.subtrees.map((s) => [String(s.size), s.msPerCard])),
    set_attribute_ratio: r.attribute ? r.attribute.app.rate / r.attribute.raw.rate : null,
    statements_per_set_attribute: r.statements.setAttributeApp,
    raw_statements_per_set_attribute: r.statements.setAttributeRaw,
    statements_per_list_page: r.statements.listApp,
    statements_per_cursor_page: r.statements.cursorListApp,
    list_first_page_server_cpu_ms: first?.serverCpuMsPerRequest ?? null,
    floor: Object.fromEntries(r.floor.map((x) => [x.path, { median_ms: x.timing.medianMs, server_cpu_ms: x.serverCpuMsPerRequest }])),
    small_move_ms: r.smallMove ? { small_project: r.smallMove.smallProjectMs, big_project: r.smallMove.bigProjectMs } : null,
    targets: targets(r),
    creation: r.creation,
    attribute: r.attribute,
    listing: r.listing,
    subtrees: r.subtrees,
    machine: r.machine,
    settings: r.settings,
    total_seconds: r.totalSeconds,
  };
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
  lines.push(`| load average (1 min) at start / end | ${f(m.loadAtStart, 2)} / ${f(r.loadAtEnd, 2)} |`);
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
      `; per attribute set: app ${f(r.statements.setAttributeApp, 1)}, raw ${r.statements.setAttributeRaw}` +
      (r.statements.listApp !== null
        ? `; per listing page: app ${f(r.statements.listApp, 1)} (by cursor ${f(r.statements.cursorListApp, 1)}), raw ${r.statements.listRaw}`
        : '') +
      ' (counted on a second server instance behind a counting relay, not during the timed runs).',
  );
  lines.push('');

  if (r.listing.length) {
    lines.push('### Project listing', '');
    lines.push(
      `One project filled with raw SQL to ${int(s.listCards)} cards (${f(r.fillSeconds, 0)} s including \`VACUUM ANALYZE\`): ` +
        `about √N children of the top-level card, each with the rest spread evenly; refs, positions, ancestor paths, depths ` +
        `and the project counters as the app keeps them. \`GET /api/1.0/projects/{id}/cards?per_page=100\`, sequential requests ` +
        `(up to ${s.listRequests} per row, at most ${s.listMaxSeconds} s per side, after ${s.listWarmup} warm-up requests or ${s.listWarmupSeconds} s of them), ` +
        `beside the same page query sent with \`pg\`, in alternating slices as above.`,
      '',
    );
    lines.push(
      '| page | app median ms | app p95 ms | raw median ms | raw p95 ms | requests app / raw | server CPU ms/request | others (cores) |',
      '|---|---|---|---|---|---|---|---|',
    );
    for (const l of r.listing) {
      lines.push(
        `| ${l.name} (page ${l.page}${l.cursor ? ', cursor=' : ''}${l.onlyIds ? ', only_ids=true' : ''}) | ${f(l.app.medianMs, 2)} | ${f(l.app.p95Ms, 2)} | ` +
          `${f(l.raw.medianMs, 2)} | ${f(l.raw.p95Ms, 2)} | ${l.app.count} / ${l.raw.count} | ${f(l.serverCpuMsPerRequest, 2)} | ${f(l.otherCores, 2)} |`,
      );
    }
    lines.push('');
  }
  if (r.attribute) {
    const a = r.attribute;
    lines.push('### Setting one attribute', '');
    lines.push(
      `\`POST /api/1.0/cards/{id}/attributes/Estimate {"value": n}\` on a number field, sequentially, over 50 cards of a project ` +
        `(${int(s.attributeN)} per side after ${int(s.attributeWarmup)} warm-up sets), beside the same transaction in raw SQL (mark the card changed, ` +
        `which locks it; read the old value; upsert the new one; stream entry with before and after), alternating slices.`,
      '',
    );
    lines.push('| side | sets/s | median ms | p95 ms | server CPU ms/request |', '|---|---|---|---|---|');
    lines.push(`| app | ${int(a.app.rate)} | ${f(a.app.medianMs, 2)} | ${f(a.app.p95Ms, 2)} | ${f(a.serverCpuMsPerRequest, 2)} |`);
    lines.push(`| raw | ${int(a.raw.rate)} | ${f(a.raw.medianMs, 2)} | ${f(a.raw.p95Ms, 2)} | – |`, '');
  }
  if (r.floor.length) {
    lines.push('### The floor: requests that do almost nothing', '');
    lines.push(
      `The same server, sequential keep-alive requests after ${int(r.settings.floorWarmup)} warm-up requests each: \`GET /health\` (public, no statement) and \`GET /attribute-types\` ` +
        '(authentication: one statement, the key lookup that also counts the rate limit; then a constant catalogue). ' +
        'No authenticated call can cost less than the second.',
      '',
    );
    lines.push('| request | requests/s | median ms | p95 ms | server CPU ms/request |', '|---|---|---|---|---|');
    for (const x of r.floor) lines.push(`| \`${x.path}\` | ${int(x.timing.rate)} | ${f(x.timing.medianMs, 2)} | ${f(x.timing.p95Ms, 2)} | ${f(x.serverCpuMsPerRequest, 3)} |`);
    lines.push('');
  }
  if (r.subtrees.length) {
    lines.push('### Subtrees inside the big project', '');
    lines.push(
      'Subtrees filled with the big project (a root, about √s children, the rest under those), each moved under an empty card, ' +
        'archived, restored and deleted through the API, one request each; the rows are checked after every step (paths, depths, ' +
        'dense positions, hidden flags, project counters against the rows, stream entries).',
      '',
    );
    lines.push('| subtree cards | move ms | archive ms | restore ms | delete ms | ms per card (all four) |', '|---|---|---|---|---|---|');
    for (const t of r.subtrees) {
      lines.push(`| ${int(t.size)} | ${f(t.ms.move, 0)} | ${f(t.ms.archive, 0)} | ${f(t.ms.restore, 0)} | ${f(t.ms.delete, 0)} | ${f(t.msPerCard, 3)} |`);
    }
    if (r.smallMove) {
      lines.push(
        '',
        `A 10-card subtree moved between two empty cards ${r.smallMove.moves} times: median ${f(r.smallMove.smallProjectMs, 2)} ms ` +
          `in a project of a dozen cards, ${f(r.smallMove.bigProjectMs, 2)} ms in the ${int(s.listCards)}-card project.`,
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

/**
 * A statement count per request as the request itself makes it. Two
 * statements come now and then, whatever the request: the rate limit's sweep
 * of ended windows (one request in 500, on average) and the API key's
 * `last_used_at` (once a minute). In a sample of 50 requests either one adds
 * 0.02; counted to a tenth, they do not turn a request's own count into a
 * missed target.
 */
function perRequest(statements: number): number {
  return Math.round(statements * 10) / 10;
}
