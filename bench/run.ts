/**
 * `npm run bench`: card creation through the HTTP API beside the same writes in
 * raw SQL, server CPU per card, and listing a page of a 1 000 000-card project.
 * Works on a scratch database of the PostgreSQL server in DATABASE_URL, which it
 * creates, migrates through the app and drops. Writes docs/PERFORMANCE.md.
 * See docs/PERFORMANCE.md for the knobs.
 */
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
  fillSubtree,
  keysetQuery,
  listingQuery,
  NamingClient,
  RAW_STATEMENTS,
  rawCreateCard,
  rawSetAttribute,
  type AttributeContext,
  type ParentContext,
} from './raw-sql.js';
import { SubtreeBench, type SmallMoveResult, type SubtreeResult } from './subtree.js';
import { benchJson, writeReport, type AttributeResult, type CreationResult, type FloorResult, type ListingResult, type Results } from './report.js';
import { createUser, startServer, type RunningServer } from './server.js';
import { runPool, summarize, type Timing } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/** BENCH_QUICK=1: smaller counts everywhere (still the 1 000 000-card project), for a run of a few minutes. */
const QUICK = process.env.BENCH_QUICK === '1';
const SERVER_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const CREATE_N = envInt('BENCH_CREATE_N', QUICK ? 600 : 2000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY || '1,16').split(',').map((s) => Number(s.trim()));
/**
 * Warm-up requests before a row is measured, the same on both sides. V8
 * optimises a request's code over its first thousand or two calls: card
 * creation after 300 warm-up creations cost 1.7 ms of server CPU per card,
 * after 1 000 1.1 ms, after 3 000 or 6 000 0.92–0.95 ms (docs/PERFORMANCE.md,
 * issue 15, eighth pass). A server runs far longer than that, so the bench
 * measures it warmed up.
 */
const WARMUP_N = envInt('BENCH_WARMUP_N', QUICK ? 2000 : 3000);
const ATTRIBUTE_N = envInt('BENCH_ATTRIBUTE_N', QUICK ? 300 : 1000);
const ATTRIBUTE_WARMUP = envInt('BENCH_ATTRIBUTE_WARMUP', QUICK ? 1000 : 2000);
const FLOOR_N = envInt('BENCH_FLOOR_N', QUICK ? 500 : 2000);
const FLOOR_WARMUP = envInt('BENCH_FLOOR_WARMUP', 2000);
const LIST_CARDS = envInt('BENCH_LIST_CARDS', 1_000_000);
const LIST_REQUESTS = envInt('BENCH_LIST_REQUESTS', QUICK ? 60 : 200);
const LIST_MAX_SECONDS = envInt('BENCH_LIST_MAX_SECONDS', QUICK ? 5 : 15);
/**
 * Requests of each listing row before it is measured (at most
 * BENCH_LIST_WARMUP_SECONDS of them): until V8 has compiled the listing's
 * code, the server's CPU per request is mostly its compiler's threads (10
 * warm-up requests gave 2–3× the CPU per page of a warmed-up server).
 */
const LIST_WARMUP = envInt('BENCH_LIST_WARMUP', QUICK ? 1000 : 2000);
const LIST_WARMUP_SECONDS = envInt('BENCH_LIST_WARMUP_SECONDS', QUICK ? 3 : 6);
const SUBTREES = (process.env.BENCH_SUBTREES ?? '1000,10000,100000').split(',').filter(Boolean).map(Number);
const SMALL_MOVES = envInt('BENCH_SMALL_MOVES', QUICK ? 20 : 40);
const DOC = process.env.BENCH_DOC ?? (QUICK ? '-' : path.join(ROOT, 'docs/PERFORMANCE.md'));
const JSON_OUT = process.env.BENCH_JSON;
const RAW_PREPARED = process.env.BENCH_RAW_PREPARED === '1';
const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
const QUIET_WAIT = envInt('BENCH_QUIET_WAIT', QUICK ? 3 : 10);
const ROUNDS = Math.max(1, envInt('BENCH_ROUNDS', QUICK ? 2 : 4));

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
  /** BENCH_DB names the scratch database (it must contain "bench"); by default one per run. */
  readonly dbName = process.env.BENCH_DB || `cardwork_bench_${process.pid}_${Date.now().toString(36)}`;
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

    const user = createUser(ROOT, this.dbUrl, 'bench');
    this.userId = user.id;
    this.apiKey = user.api_key;
    this.api = new ApiClient(this.server.port, user.api_key, Math.max(...CONCURRENCIES, 16));
    const org = await this.api.json<{ id: number }>('POST', '/organizations', { name: 'Bench' });
    this.orgId = org.id;
    this.pool = new pg.Pool({
      connectionString: this.dbUrl,
      max: Math.max(...CONCURRENCIES, 1),
      // BENCH_RAW_PREPARED=1: the raw side names its statements too (docs/PERFORMANCE.md, third pass).
      ...(RAW_PREPARED ? { Client: NamingClient } : {}),
    });
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

  /**
   * The floor under every figure above: the same server answering requests
   * that do (almost) nothing, sequentially over keep-alive HTTP. `GET /health`
   * is public and sends no statement; `GET /attribute-types` authenticates
   * (one statement: the key lookup that also counts the rate limit) and
   * answers a constant catalogue. No API call can cost the server less than
   * `GET /attribute-types` does.
   */
  async floor(n: number): Promise<FloorResult[]> {
    const out: FloorResult[] = [];
    for (const path of ['/health', '/attribute-types']) {
      const call = async () => {
        const res = await this.api.request('GET', path);
        if (res.status !== 200) throw new Error(`GET ${path} → ${res.status}`);
      };
      await runPool(FLOOR_WARMUP, 1, () => call());
      await waitForQuiet(`floor ${path}`);
      const latencies: number[] = [];
      const before = await this.sample();
      const t = await runPool(n, 1, () => call(), { latencies });
      const server = (await this.cpuSince(before)).server ?? 0;
      const timing = summarize(latencies, t.seconds);
      out.push({ path: `GET /api/1.0${path}`, timing, serverCpuMsPerRequest: (server / n) * 1000 });
      log(`floor GET ${path}: median ${fmt(timing.medianMs, 2)} ms, server CPU ${fmt((server / n) * 1000, 3)} ms/request`);
    }
    return out;
  }

  /**
   * Setting one number field, sequentially: `POST /cards/{id}/attributes/{name}`
   * beside the same transaction in raw SQL, over 50 cards of a project per
   * side, in alternating slices. Checks the values and stream entries after.
   */
  async attribute(): Promise<AttributeResult> {
    const cardsPerSide = 50;
    const sides = {} as Record<'app' | 'raw', { project: Project; cards: number[]; attributeId: number; latencies: number[]; seconds: number; server: number }>;
    for (const side of ['app', 'raw'] as const) {
      const project = await this.project(`attribute ${side}`);
      const field = await this.api.json<{ id: number }>('POST', `/projects/${project.id}/attributes`, { name: 'Estimate', type: 'number' });
      const cards: number[] = [];
      for (let i = 0; i < cardsPerSide; i++) {
        cards.push((await this.api.json<{ id: number }>('POST', `/cards/${project.top_level_card_id}/children`, { title: `a ${i}` })).id);
      }
      sides[side] = { project, cards, attributeId: field.id, latencies: [], seconds: 0, server: 0 };
    }
    const app = (i: number) => async () => {
      const s = sides.app;
      const res = await this.api.request('POST', `/cards/${s.cards[i % cardsPerSide]}/attributes/Estimate`, { value: i + 1 });
      if (res.status !== 200) throw new Error(`set attribute → ${res.status}: ${res.body.slice(0, 300)}`);
    };
    const raw = (i: number) => {
      const s = sides.raw;
      const ctx: AttributeContext = { cardId: s.cards[i % cardsPerSide], projectId: s.project.id, attributeId: s.attributeId, name: 'Estimate', userId: this.userId };
      return () => rawSetAttribute(this.pool!, ctx, i + 1);
    };
    await runPool(ATTRIBUTE_WARMUP, 1, (i) => app(i)());
    await runPool(ATTRIBUTE_WARMUP, 1, (i) => raw(i)());
    await waitForQuiet('set attribute');
    const perRound = Math.ceil(ATTRIBUTE_N / ROUNDS);
    for (let round = 0, done = ATTRIBUTE_WARMUP; round < ROUNDS; round++, done += perRound) {
      for (const side of round % 2 === 0 ? (['app', 'raw'] as const) : (['raw', 'app'] as const)) {
        const s = sides[side];
        const before = await this.sample();
        const t = await runPool(perRound, 1, (i) => (side === 'app' ? app : raw)(done + i)(), { latencies: s.latencies });
        s.seconds += t.seconds;
        s.server += (await this.cpuSince(before)).server ?? 0;
      }
    }
    const total = ATTRIBUTE_WARMUP + perRound * ROUNDS;
    for (const side of ['app', 'raw'] as const) await this.verifyAttribute(sides[side].project, sides[side].cards, total);
    const timing = (side: 'app' | 'raw') => summarize(sides[side].latencies, sides[side].seconds);
    const result = {
      app: timing('app'),
      raw: timing('raw'),
      serverCpuMsPerRequest: (sides.app.server / sides.app.latencies.length) * 1000,
    };
    log(`set attribute: app ${fmt(result.app.rate, 0)}/s (median ${fmt(result.app.medianMs, 2)} ms), raw ${fmt(result.raw.rate, 0)}/s (median ${fmt(result.raw.medianMs, 2)} ms)`);
    return result;
  }

  /** Each card holds the last value set on it (none when fewer sets than cards left it out), and every change left one stream entry. */
  private async verifyAttribute(p: Project, cards: number[], sets: number): Promise<void> {
    const { rows } = await this.pool!.query<{ entries: number; wrong: number }>(
      `SELECT (SELECT count(*)::int FROM cards.card_stream WHERE project_id = $1 AND action = 'card.attribute_changed') AS entries,
              (SELECT count(*)::int FROM unnest($2::bigint[]) WITH ORDINALITY AS c(id, k)
                 LEFT JOIN fields.scalar_values v ON v.card_id = c.id
                WHERE v.value IS DISTINCT FROM CASE WHEN c.k <= $3::int THEN to_jsonb($3::int - (($3::int - c.k::int) % $4::int)) END)
               AS wrong`,
      [p.id, cards, sets, cards.length],
    );
    if (rows[0].entries !== sets || rows[0].wrong !== 0) throw new Error(`attribute project ${p.id}: ${JSON.stringify(rows[0])} (expected ${sets} entries)`);
  }

  async listing(p: Project, total: number): Promise<ListingResult[]> {
    const perPage = 100;
    const middle = Math.max(1, Math.ceil(total / perPage / 2));
    const scenarios = [
      { name: 'first page', page: 1, onlyIds: false, cursor: false },
      { name: 'middle page', page: middle, onlyIds: false, cursor: false },
      { name: 'middle page by cursor', page: middle, onlyIds: false, cursor: true },
      { name: 'first page, only_ids', page: 1, onlyIds: true, cursor: false },
      { name: 'middle page, only_ids', page: middle, onlyIds: true, cursor: false },
    ];
    const out: ListingResult[] = [];
    for (const s of scenarios) {
      let url = `/projects/${p.id}/cards?per_page=${perPage}&page=${s.page}${s.onlyIds ? '&only_ids=true' : ''}`;
      let sql = listingQuery(s.onlyIds);
      let params = [p.id, perPage, (s.page - 1) * perPage];
      if (s.cursor) {
        // The cursor the page before answers, as a client walking the pages would hold it.
        const before = await this.api.request('GET', `/projects/${p.id}/cards?per_page=${perPage}&page=${s.page - 1}&only_ids=true`);
        const cursor = before.headers['x-service-nextcursor'];
        if (before.status !== 200 || typeof cursor !== 'string') throw new Error(`page ${s.page - 1}: no X-Service-NextCursor`);
        const lastId = (JSON.parse(before.body) as number[]).at(-1)!;
        url = `/projects/${p.id}/cards?per_page=${perPage}&cursor=${cursor}`;
        sql = keysetQuery(s.onlyIds);
        params = [p.id, perPage, lastId];
      }
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
      await runPool(LIST_WARMUP, 1, appTask, { maxSeconds: LIST_WARMUP_SECONDS, minCount: 10 });
      await runPool(LIST_WARMUP, 1, rawTask, { maxSeconds: LIST_WARMUP_SECONDS, minCount: 10 });
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
        cursor: s.cursor,
        app: appTiming,
        raw: rawTiming,
        serverCpuMsPerRequest: cpu.server !== null ? (cpu.server / appTiming.count) * 1000 : null,
        otherCores: cpu.otherCores,
      });
    }
    return out;
  }

  /**
   * Subtrees of SUBTREES cards inside the big project (filled with it), each
   * moved, archived, restored and deleted through the API; then a 10-card
   * subtree moved back and forth, in a small project and in the big one.
   */
  async subtrees(big: Project, roots: Map<number, number>): Promise<{ subtrees: SubtreeResult[]; smallMove: SmallMoveResult }> {
    const sb = new SubtreeBench(this.api, this.pool!);
    const subtrees: SubtreeResult[] = [];
    const card = async (p: Project, title: string) =>
      (await this.api.json<{ id: number }>('POST', `/cards/${p.top_level_card_id}/children`, { title })).id;
    for (const [size, root] of roots) {
      if (size === 10) continue;
      const target = await card(big, `target of ${size}`);
      await waitForQuiet(`subtree ${size}`);
      const r = await sb.run(big.id, root, size, big.top_level_card_id, target);
      log(`subtree of ${size}: move ${fmt(r.ms.move, 0)} ms, archive ${fmt(r.ms.archive, 0)} ms, restore ${fmt(r.ms.restore, 0)} ms, delete ${fmt(r.ms.delete, 0)} ms, ${fmt(r.msPerCard, 3)} ms/card`);
      subtrees.push(r);
    }
    const small = await this.project('small moves');
    const fill = new pg.Client({ connectionString: this.dbUrl });
    await fill.connect();
    const places = async (p: Project, root?: number) => {
      const a = await card(p, 'A');
      const b = await card(p, 'B');
      if (root !== undefined) {
        await this.api.json('POST', `/cards/${root}/relocate`, { parent_id: a });
        return { root, a, b };
      }
      return { root: await fillSubtree(fill, { ...this.context(p), parentId: a }, 10), a, b };
    };
    try {
      const inSmall = await places(small);
      const inBig = await places(big, roots.get(10));
      await waitForQuiet('small moves');
      const smallProjectMs = await sb.smallMoves(inSmall.root, 10, inSmall.a, inSmall.b, SMALL_MOVES);
      const bigProjectMs = await sb.smallMoves(inBig.root, 10, inBig.a, inBig.b, SMALL_MOVES);
      log(`10-card subtree moves: ${fmt(smallProjectMs, 2)} ms in a small project, ${fmt(bigProjectMs, 2)} ms in the big one (median of ${SMALL_MOVES})`);
      return { subtrees, smallMove: { smallProjectMs, bigProjectMs, moves: SMALL_MOVES } };
    } finally {
      await fill.end();
    }
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
      const field = await api.json<{ id: number }>('POST', `/projects/${p.id}/attributes`, { name: 'Estimate', type: 'number' });
      const card = await api.json<{ id: number }>('POST', `/cards/${p.top_level_card_id}/children`, { title: 'valued' });
      await api.json('POST', `/cards/${card.id}/attributes/${field.id}`, { value: 0 });
      proxy.reset();
      for (let i = 1; i <= 20; i++) await api.json('POST', `/cards/${card.id}/attributes/Estimate`, { value: i });
      const setAttribute = proxy.statements / 20;
      const perPage = async (path: string) => {
        await api.json('GET', path);
        proxy.reset();
        for (let i = 0; i < 20; i++) await api.json('GET', path);
        return proxy.statements / 20;
      };
      let list: number | null = null;
      let cursorList: number | null = null;
      if (listProject) {
        list = await perPage(`/projects/${listProject.id}/cards?per_page=100`);
        const first = await api.request('GET', `/projects/${listProject.id}/cards?per_page=100&only_ids=true`);
        cursorList = await perPage(`/projects/${listProject.id}/cards?per_page=100&cursor=${String(first.headers['x-service-nextcursor'])}`);
      }
      return {
        createApp: create,
        createRaw: RAW_STATEMENTS.create,
        setAttributeApp: setAttribute,
        setAttributeRaw: RAW_STATEMENTS.setAttribute,
        listApp: list,
        cursorListApp: cursorList,
        listRaw: RAW_STATEMENTS.listPage,
      };
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
    const attribute = ATTRIBUTE_N > 0 ? await bench.attribute() : null;
    const floor = await bench.floor(FLOOR_N);

    let listing: ListingResult[] = [];
    let fillSeconds: number | null = null;
    let listProject: Project | null = null;
    let subtrees: SubtreeResult[] = [];
    let smallMove: SmallMoveResult | null = null;
    // Sizes of the subtrees the big project holds besides its two-level filling, and their roots.
    const subtreeSizes = LIST_CARDS > 0 && SUBTREES.length ? [...SUBTREES, 10] : [];
    const roots = new Map<number, number>();
    if (LIST_CARDS > 0) {
      listProject = await bench.project('listing');
      log(`filling a project to ${LIST_CARDS.toLocaleString('en')} cards with raw SQL`);
      const fillClient = new pg.Client({ connectionString: bench.dbUrl });
      await fillClient.connect();
      const t0 = Date.now();
      let lastLog = 0;
      try {
        const filler = LIST_CARDS - subtreeSizes.reduce((a, b) => a + b, 0);
        if (filler < 1) throw new Error(`BENCH_LIST_CARDS (${LIST_CARDS}) must exceed the subtrees (${subtreeSizes.join(' + ')})`);
        await fillProject(
          fillClient,
          bench.context(listProject),
          filler,
          (done) => {
            if (Date.now() - lastLog > 5000 || done === filler) {
              lastLog = Date.now();
              log(`  ${done.toLocaleString('en')} cards`);
            }
          },
          { vacuum: false },
        );
        for (const size of subtreeSizes) roots.set(size, await fillSubtree(fillClient, bench.context(listProject), size));
        await fillClient.query(`VACUUM (ANALYZE) cards.cards`);
      } finally {
        await fillClient.end();
      }
      fillSeconds = (Date.now() - t0) / 1000;
      log(`filled in ${fmt(fillSeconds)} s (with VACUUM ANALYZE)`);
      listing = await bench.listing(listProject, LIST_CARDS);
      if (roots.size) ({ subtrees, smallMove } = await bench.subtrees(listProject, roots));
    }

    await bench.server?.stop();
    log('counting SQL statements per request (second server behind a counting relay)');
    const statements = await bench.statementsPerRequest(listProject);
    log(
      `statements per creation: app ${fmt(statements.createApp)}, raw ${statements.createRaw}; ` +
        `per attribute set: app ${fmt(statements.setAttributeApp)}, raw ${statements.setAttributeRaw}` +
        (statements.listApp !== null ? `; per listing page: app ${fmt(statements.listApp)} (by cursor ${fmt(statements.cursorListApp ?? NaN)}), raw ${statements.listRaw}` : ''),
    );

    const results: Results = {
      machine: machineInfo(ROOT, pgInfo.version, pgInfo.settings, loadAtStart),
      settings: {
        createN: CREATE_N,
        concurrencies: CONCURRENCIES,
        warmupN: WARMUP_N,
        listCards: LIST_CARDS,
        listRequests: LIST_REQUESTS,
        listWarmup: LIST_WARMUP,
        listWarmupSeconds: LIST_WARMUP_SECONDS,
        listMaxSeconds: LIST_MAX_SECONDS,
        rounds: ROUNDS,
        quietWait: QUIET_WAIT,
        attributeN: ATTRIBUTE_N,
        attributeWarmup: ATTRIBUTE_WARMUP,
        floorWarmup: FLOOR_WARMUP,
        quick: QUICK,
      },
      creation,
      attribute,
      floor,
      listing,
      subtrees,
      smallMove,
      fillSeconds,
      statements,
      totalSeconds: (Date.now() - started) / 1000,
      loadAtEnd: os.loadavg()[0],
    };
    if (DOC && DOC !== '-') {
      writeReport(DOC, results);
      log(`wrote ${path.relative(ROOT, DOC)}`);
    }
    if (JSON_OUT) {
      fs.writeFileSync(JSON_OUT, `${JSON.stringify(benchJson(results), null, 2)}\n`);
      log(`wrote ${JSON_OUT}`);
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
