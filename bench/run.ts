/**
 * `npm run bench`: card creation through the HTTP API beside the same writes in
 * raw SQL, server CPU per card, and listing a page of a 1 000 000-card project.
 * Works on a scratch database of the PostgreSQL server in DATABASE_URL, which it
 * creates, migrates through the app and drops. Writes docs/PERFORMANCE.md.
 * See docs/PERFORMANCE.md for the knobs.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiClient } from './http.js';
import { machineCpu, machineInfo, processCpuSeconds, processesCpuSeconds, ticksPerSecond } from './machine.js';
import { CountingPgProxy } from './pg-proxy.js';
import {
  createScratchDatabase,
  databaseUrl,
  dropScratchDatabase,
  fillProject,
  listingQuery,
  rawCreateCard,
  type ParentContext,
} from './raw-sql.js';
import { writeReport, type CreationResult, type ListingResult, type Results } from './report.js';
import { startServer, type RunningServer } from './server.js';
import { runPool, summarize, type Timing } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

const SERVER_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const CREATE_N = envInt('BENCH_CREATE_N', 2000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY || '1,16').split(',').map((s) => Number(s.trim()));
const WARMUP_N = envInt('BENCH_WARMUP_N', 300);
const LIST_CARDS = envInt('BENCH_LIST_CARDS', 1_000_000);
const LIST_REQUESTS = envInt('BENCH_LIST_REQUESTS', 200);
const LIST_MAX_SECONDS = envInt('BENCH_LIST_MAX_SECONDS', 15);
const DOC = process.env.BENCH_DOC ?? path.join(ROOT, 'docs/PERFORMANCE.md');
const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
const QUIET_WAIT = envInt('BENCH_QUIET_WAIT', 10);
const ROUNDS = Math.max(1, envInt('BENCH_ROUNDS', 4));

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const fmt = (n: number, d = 1) => n.toFixed(d);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits (at most BENCH_QUIET_WAIT seconds) until the rest of the machine is
 * nearly idle — under 0.3 busy cores over 2 s — so that a measurement does not
 * start in the middle of someone else's build or test run. Called only while
 * the bench itself is idle. Returns the busy cores last seen.
 */
async function waitForQuiet(label: string): Promise<number | null> {
  const start = Date.now();
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  for (;;) {
    const a = machineCpu();
    await sleep(2000);
    const b = machineCpu();
    if (!a || !b || b.total <= a.total) return null;
    const busy = ((b.busy - a.busy) / (b.total - a.total)) * cores;
    if (busy < 0.3) return busy;
    if (Date.now() - start > QUIET_WAIT * 1000) {
      log(`${label}: the machine stays busy (${busy.toFixed(2)} cores used by other processes); measuring anyway`);
      return busy;
    }
  }
}

interface Project {
  id: number;
  organization_id: number;
  top_level_card_id: number;
}

interface CpuSample {
  server: number | null;
  postgres: Map<number, number>;
  client: NodeJS.CpuUsage;
  machine: { busy: number; total: number } | null;
  at: number;
}

class Bench {
  readonly dbName = `cardwork_bench_${process.pid}_${Date.now().toString(36)}`;
  readonly dbUrl = databaseUrl(SERVER_URL, this.dbName);
  admin!: pg.Client;
  server?: RunningServer;
  pool?: pg.Pool;
  api!: ApiClient;
  userId = 0;
  apiKey = '';
  orgId = 0;
  private created = false;

  async setUp(): Promise<{ version: string; settings: Record<string, string> }> {
    this.admin = new pg.Client({ connectionString: SERVER_URL });
    await this.admin.connect();
    const settings: Record<string, string> = {};
    for (const name of ['shared_buffers', 'work_mem', 'synchronous_commit', 'fsync', 'max_connections']) {
      const { rows } = await this.admin.query<Record<string, string>>(`SHOW ${name}`);
      settings[name] = Object.values(rows[0])[0];
    }
    const { rows } = await this.admin.query<{ v: string }>(`SELECT version() AS v`);
    log(`creating scratch database ${this.dbName}`);
    await createScratchDatabase(SERVER_URL, this.dbName);
    this.created = true;
    log('starting the server (it migrates the scratch database)');
    this.server = await startServer(ROOT, this.dbUrl);
    log(`server pid ${this.server.pid} on 127.0.0.1:${this.server.port}`);

    const cli = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bin/cardwork.js'), 'user', 'create', '--username', 'bench', '--email', 'bench@example.com'],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: this.dbUrl }, encoding: 'utf8' },
    );
    if (cli.status !== 0) throw new Error(`cardwork user create failed: ${cli.stderr}`);
    const user = JSON.parse(cli.stdout.trim().split('\n').pop()!) as { id: number; api_key: string };
    this.userId = user.id;
    this.apiKey = user.api_key;
    this.api = new ApiClient(this.server.port, user.api_key, Math.max(...CONCURRENCIES, 16));
    const org = await this.api.json<{ id: number }>('POST', '/organizations', { name: 'Bench' });
    this.orgId = org.id;
    this.pool = new pg.Pool({ connectionString: this.dbUrl, max: Math.max(...CONCURRENCIES, 1) });
    // Connections are cut by DROP DATABASE … WITH (FORCE) at the end; that is expected.
    this.pool.on('error', () => undefined);
    return { version: rows[0].v, settings };
  }

  project(title: string): Promise<Project> {
    return this.api.json<Project>('POST', `/organizations/${this.orgId}/projects`, { title });
  }

  context(p: Project): ParentContext {
    return { projectId: p.id, organizationId: p.organization_id, parentId: p.top_level_card_id, userId: this.userId };
  }

  async sample(): Promise<CpuSample> {
    const { rows } = await this.admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1`, [this.dbName]);
    return {
      server: this.server ? processCpuSeconds(this.server.pid) : null,
      postgres: processesCpuSeconds(rows.map((r) => r.pid)),
      client: process.cpuUsage(),
      machine: machineCpu(),
      at: Date.now(),
    };
  }

  /** CPU used between two samples: server process, database backends, this process, whole-machine busy share. */
  async cpuSince(before: CpuSample) {
    const after = await this.sample();
    let pgSeconds: number | null = after.postgres.size ? 0 : null;
    for (const [pid, s] of after.postgres) pgSeconds! += s - (before.postgres.get(pid) ?? 0);
    const clientUsage = process.cpuUsage(before.client);
    const server = before.server !== null && after.server !== null ? after.server - before.server : null;
    const client = (clientUsage.user + clientUsage.system) / 1e6;
    const wall = (after.at - before.at) / 1000;
    let machineBusy: number | null = null;
    let otherCores: number | null = null;
    if (before.machine && after.machine && after.machine.total > before.machine.total) {
      machineBusy = (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total);
      // Busy core-seconds of the whole machine minus what the server, its database backends and this process used.
      const busySeconds = (after.machine.busy - before.machine.busy) / ticksPerSecond();
      otherCores = Math.max(0, (busySeconds - (server ?? 0) - (pgSeconds ?? 0) - client) / wall);
    }
    return { server, postgres: pgSeconds, client, machineBusy, otherCores };
  }

  appCreate(p: Project, prefix: string) {
    return async (i: number) => {
      const res = await this.api.request('POST', `/cards/${p.top_level_card_id}/children`, { title: `${prefix} ${i}` });
      if (res.status !== 201) throw new Error(`card creation → ${res.status}: ${res.body.slice(0, 300)}`);
    };
  }

  rawCreate(p: Project, prefix: string) {
    const ctx = this.context(p);
    return (i: number) => rawCreateCard(this.pool!, ctx, `${prefix} ${i}`);
  }

  /** The rows of a creation project are what the app promises: N cards, refs 1…N, dense positions. */
  async verifyCreated(p: Project, n: number): Promise<void> {
    const { rows } = await this.pool!.query<{ n: number; refs: number; max_ref: number; positions: number; max_pos: number; stream: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT ref)::int AS refs, max(ref) AS max_ref,
              count(DISTINCT position)::int AS positions, max(position) AS max_pos,
              (SELECT count(*)::int FROM cards.card_stream s WHERE s.project_id = $1 AND s.action = 'card.created') - 1 AS stream
         FROM cards.cards WHERE project_id = $1 AND depth = 1`,
      [p.id],
    );
    const r = rows[0];
    if (r.n !== n || r.refs !== n || r.max_ref !== n || r.positions !== n || r.max_pos !== n - 1 || r.stream !== n) {
      throw new Error(`project ${p.id}: unexpected rows after creation ${JSON.stringify(r)} (expected ${n})`);
    }
  }

  /**
   * Card creation at concurrency `c`, app and raw SQL, each on a project of its
   * own. The N creations of each side run in ROUNDS alternating slices (app,
   * raw, raw, app, …) so that both sides meet the same background load.
   */
  async creation(c: number): Promise<CreationResult[]> {
    const sides = ['app', 'raw'] as const;
    const acc = new Map(
      sides.map((side) => [
        side,
        { latencies: [] as number[], seconds: 0, server: 0, postgres: 0, client: 0, busy: 0, other: 0, project: null as Project | null },
      ]),
    );
    for (const side of sides) acc.get(side)!.project = await this.project(`${side} c=${c}`);
    await waitForQuiet(`create c=${c}`);
    const perRound = Math.ceil(CREATE_N / ROUNDS);
    let done = 0;
    for (let round = 0; done < CREATE_N; round++) {
      const n = Math.min(perRound, CREATE_N - done);
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const a = acc.get(side)!;
        const task = side === 'app' ? this.appCreate(a.project!, 'Bench card') : this.rawCreate(a.project!, 'Bench card');
        const before = await this.sample();
        const latencies: number[] = [];
        const t = await runPool(n, c, (i) => task(done + i), { latencies });
        const cpu = await this.cpuSince(before);
        a.latencies.push(...latencies);
        a.seconds += t.seconds;
        a.server += cpu.server ?? 0;
        a.postgres += cpu.postgres ?? 0;
        a.client += cpu.client;
        a.busy += (cpu.machineBusy ?? 0) * t.seconds;
        a.other += (cpu.otherCores ?? 0) * t.seconds;
      }
      done += n;
    }
    const out: CreationResult[] = [];
    for (const side of sides) {
      const a = acc.get(side)!;
      await this.verifyCreated(a.project!, CREATE_N);
      const timing = summarize(a.latencies, a.seconds);
      const perCard = (seconds: number) => (seconds / CREATE_N) * 1000;
      const result: CreationResult = {
        side,
        concurrency: c,
        timing,
        serverCpuMsPerCard: side === 'app' && this.server ? perCard(a.server) : null,
        postgresCpuMsPerCard: perCard(a.postgres),
        clientCpuMsPerCard: perCard(a.client),
        machineBusy: a.busy / a.seconds,
        otherCores: a.other / a.seconds,
      };
      log(
        `create ${side} c=${c}: ${fmt(timing.rate, 0)}/s, median ${fmt(timing.medianMs, 2)} ms, p95 ${fmt(timing.p95Ms, 2)} ms` +
          (result.serverCpuMsPerCard !== null ? `, server CPU ${fmt(result.serverCpuMsPerCard, 3)} ms/card` : '') +
          `, postgres CPU ${fmt(result.postgresCpuMsPerCard!, 3)} ms/card, other processes ${fmt(result.otherCores!, 2)} cores`,
      );
      out.push(result);
    }
    return out;
  }

  async listing(p: Project, total: number): Promise<ListingResult[]> {
    const perPage = 100;
    const middle = Math.max(1, Math.ceil(total / perPage / 2));
    const scenarios = [
      { name: 'first page', page: 1, onlyIds: false },
      { name: 'middle page', page: middle, onlyIds: false },
      { name: 'first page, only_ids', page: 1, onlyIds: true },
      { name: 'middle page, only_ids', page: middle, onlyIds: true },
    ];
    const out: ListingResult[] = [];
    for (const s of scenarios) {
      const url = `/projects/${p.id}/cards?per_page=${perPage}&page=${s.page}${s.onlyIds ? '&only_ids=true' : ''}`;
      const sql = listingQuery(s.onlyIds);
      const params = [p.id, perPage, (s.page - 1) * perPage];
      // Same page from both sides, or the comparison means nothing.
      const app = await this.api.request('GET', url);
      if (app.status !== 200) throw new Error(`GET ${url} → ${app.status}: ${app.body.slice(0, 300)}`);
      const appIds = (JSON.parse(app.body) as (number | { id: number })[]).map((x) => (typeof x === 'number' ? x : x.id));
      const raw = await this.pool!.query<{ id: string }>(sql, params);
      if (appIds.length !== perPage || appIds.join() !== raw.rows.map((r) => Number(r.id)).join()) {
        throw new Error(`listing ${s.name}: the app and the raw query disagree`);
      }
      if (Number(app.headers['x-service-total']) !== total) throw new Error(`listing: X-Service-Total ${app.headers['x-service-total']} ≠ ${total}`);
      const appTask = async () => {
        const res = await this.api.request('GET', url);
        if (res.status !== 200) throw new Error(`GET ${url} → ${res.status}`);
      };
      const rawTask = async () => {
        await this.pool!.query(sql, params);
      };
      await runPool(10, 1, appTask);
      await runPool(10, 1, rawTask);
      await waitForQuiet(`list ${s.name}`);
      // Alternating slices again (app, raw, raw, app, …); each side stops at LIST_MAX_SECONDS in all.
      const perRound = Math.ceil(LIST_REQUESTS / ROUNDS);
      const opts = { maxSeconds: LIST_MAX_SECONDS / ROUNDS, minCount: Math.min(perRound, Math.ceil(30 / ROUNDS)) };
      const appLatencies: number[] = [];
      const rawLatencies: number[] = [];
      let appSeconds = 0;
      let rawSeconds = 0;
      let serverSeconds = 0;
      let otherCoreSeconds = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? (['app', 'raw'] as const) : (['raw', 'app'] as const);
        for (const side of order) {
          if (side === 'app') {
            const before = await this.sample();
            const t = await runPool(perRound, 1, appTask, { ...opts, latencies: appLatencies });
            const cpu = await this.cpuSince(before);
            appSeconds += t.seconds;
            serverSeconds += cpu.server ?? 0;
            otherCoreSeconds += (cpu.otherCores ?? 0) * t.seconds;
          } else {
            rawSeconds += (await runPool(perRound, 1, rawTask, { ...opts, latencies: rawLatencies })).seconds;
          }
        }
      }
      const appTiming = summarize(appLatencies, appSeconds);
      const rawTiming = summarize(rawLatencies, rawSeconds);
      const cpu = { server: this.server ? serverSeconds : null, otherCores: otherCoreSeconds / appSeconds };
      log(
        `list ${s.name}: app median ${fmt(appTiming.medianMs, 2)} ms p95 ${fmt(appTiming.p95Ms, 2)} ms (n=${appTiming.count}), ` +
          `raw median ${fmt(rawTiming.medianMs, 2)} ms p95 ${fmt(rawTiming.p95Ms, 2)} ms (n=${rawTiming.count})`,
      );
      out.push({
        name: s.name,
        page: s.page,
        onlyIds: s.onlyIds,
        app: appTiming,
        raw: rawTiming,
        serverCpuMsPerRequest: cpu.server !== null ? (cpu.server / appTiming.count) * 1000 : null,
        otherCores: cpu.otherCores,
      });
    }
    return out;
  }

  /**
   * Statements the server sends per request, counted by a relay in front of
   * PostgreSQL, on a second server instance (so the timed runs have no relay).
   */
  async statementsPerRequest(listProject: Project | null): Promise<Results['statements']> {
    const target = new URL(SERVER_URL);
    const proxy = new CountingPgProxy(target.hostname, Number(target.port || 5432));
    const proxyPort = await proxy.listen();
    const url = new URL(this.dbUrl);
    url.hostname = '127.0.0.1';
    url.port = String(proxyPort);
    const server = await startServer(ROOT, url.toString(), { MIGRATIONS_RUN: 'false' });
    const api = new ApiClient(server.port, this.apiKey, 1);
    try {
      const p = await api.json<Project>('POST', `/organizations/${this.orgId}/projects`, { title: 'statements' });
      const n = 50;
      await api.json('POST', `/cards/${p.top_level_card_id}/children`, { title: 'warm' });
      proxy.reset();
      for (let i = 0; i < n; i++) await api.json('POST', `/cards/${p.top_level_card_id}/children`, { title: `s ${i}` });
      const create = proxy.statements / n;
      let list: number | null = null;
      if (listProject) {
        await api.json('GET', `/projects/${listProject.id}/cards?per_page=100`);
        proxy.reset();
        for (let i = 0; i < 20; i++) await api.json('GET', `/projects/${listProject.id}/cards?per_page=100`);
        list = proxy.statements / 20;
      }
      return { createApp: create, createRaw: 5, listApp: list, listRaw: 1 };
    } finally {
      api.close();
      await server.stop();
      await proxy.close();
    }
  }

  async tearDown(): Promise<void> {
    this.api?.close();
    await this.pool?.end().catch(() => undefined);
    await this.server?.stop().catch(() => undefined);
    if (this.created && !KEEP_DB) {
      log(`dropping ${this.dbName}`);
      await dropScratchDatabase(SERVER_URL, this.dbName).catch((e: unknown) => log(`could not drop ${this.dbName}: ${String(e)}`));
    } else if (this.created) {
      log(`kept ${this.dbUrl} (BENCH_KEEP_DB=1)`);
    }
    await this.admin?.end().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw new Error('dist/src/main.js is missing: run `npm run build` first');
  const started = Date.now();
  const loadAtStart = os.loadavg()[0];
  const bench = new Bench();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('interrupted: cleaning up');
    void bench.tearDown().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    const pgInfo = await bench.setUp();

    log(`warm-up: ${WARMUP_N} creations each side`);
    const warmApp = await bench.project('warm-up app');
    const warmRaw = await bench.project('warm-up raw');
    const top = Math.max(...CONCURRENCIES);
    await runPool(WARMUP_N, top, bench.appCreate(warmApp, 'warm'));
    await runPool(WARMUP_N, top, bench.rawCreate(warmRaw, 'warm'));

    const creation: CreationResult[] = [];
    for (const c of CONCURRENCIES) {
      creation.push(...(await bench.creation(c)));
    }

    let listing: ListingResult[] = [];
    let fillSeconds: number | null = null;
    let listProject: Project | null = null;
    if (LIST_CARDS > 0) {
      listProject = await bench.project('listing');
      log(`filling a project to ${LIST_CARDS.toLocaleString('en')} cards with raw SQL`);
      const fillClient = new pg.Client({ connectionString: bench.dbUrl });
      await fillClient.connect();
      const t0 = Date.now();
      let lastLog = 0;
      try {
        await fillProject(fillClient, bench.context(listProject), LIST_CARDS, (done) => {
          if (Date.now() - lastLog > 5000 || done === LIST_CARDS) {
            lastLog = Date.now();
            log(`  ${done.toLocaleString('en')} cards`);
          }
        });
      } finally {
        await fillClient.end();
      }
      fillSeconds = (Date.now() - t0) / 1000;
      log(`filled in ${fmt(fillSeconds)} s (with VACUUM ANALYZE)`);
      listing = await bench.listing(listProject, LIST_CARDS);
    }

    await bench.server?.stop();
    log('counting SQL statements per request (second server behind a counting relay)');
    const statements = await bench.statementsPerRequest(listProject);
    log(`statements per creation: app ${fmt(statements.createApp)}, raw ${statements.createRaw}` +
      (statements.listApp !== null ? `; per listing page: app ${fmt(statements.listApp)}, raw ${statements.listRaw}` : ''));

    const results: Results = {
      machine: machineInfo(ROOT, pgInfo.version, pgInfo.settings, loadAtStart),
      settings: {
        createN: CREATE_N,
        concurrencies: CONCURRENCIES,
        warmupN: WARMUP_N,
        listCards: LIST_CARDS,
        listRequests: LIST_REQUESTS,
        listMaxSeconds: LIST_MAX_SECONDS,
        rounds: ROUNDS,
        quietWait: QUIET_WAIT,
      },
      creation,
      listing,
      fillSeconds,
      statements,
      totalSeconds: (Date.now() - started) / 1000,
    };
    if (DOC && DOC !== '-') {
      writeReport(DOC, results);
      log(`wrote ${path.relative(ROOT, DOC)}`);
    }
    printSummary(results);
  } finally {
    await bench.tearDown();
  }
}

function printSummary(r: Results): void {
  const rows = r.creation.map((c) => `  create ${c.side} c=${c.concurrency}: ${fmt(c.timing.rate, 0)}/s`);
  const ratio = (c: number) => {
    const a = r.creation.find((x) => x.side === 'app' && x.concurrency === c)?.timing.rate;
    const b = r.creation.find((x) => x.side === 'raw' && x.concurrency === c)?.timing.rate;
    return a && b ? `  app/raw c=${c}: ${fmt((a / b) * 100, 0)} %` : '';
  };
  process.stdout.write(
    [
      'cardwork bench',
      ...rows,
      ...r.settings.concurrencies.map(ratio),
      ...r.listing.map((l) => `  list ${l.name}: app median ${fmt(l.app.medianMs, 2)} ms, raw median ${fmt(l.raw.medianMs, 2)} ms`),
      `  total ${fmt(r.totalSeconds, 0)} s`,
      '',
    ].join('\n'),
  );
}

export type { Timing };

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exitCode = 1;
});
