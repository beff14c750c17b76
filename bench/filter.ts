/**
 * `npm run bench:filter`: the filter language at scale. A project of
 * 1 000 000 cards with fields, members and groups, and a team of 50 projects
 * for /search, generated with INSERT … SELECT in the database `bench_filter`
 * (kept between runs with BENCH_FILTER_REUSE=1). A dozen filters are timed
 * through the API beside the same question written by hand in SQL (page and
 * count, side by side on two connections as the app runs them) on the same
 * database, with the floor under them (an authenticated request that reads
 * nothing); the plans of the app's queries are recorded. Writes the
 * "Filters" section of docs/PERFORMANCE.md.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiClient } from './http.js';
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from './raw-sql.js';
import { createUser, startServer, type RunningServer } from './server.js';
import { runPool, summarize, type Timing } from './stats.js';
import 'reflect-metadata';
import { CardFilterService } from '../src/modules/cards/filter/card-filter.service.js';
import { CardFilterSql } from '../src/modules/card-hierarchy/infrastructure/card-filter.sql.js';
import { FieldFilterSql } from '../src/modules/fields/infrastructure/field-filter.sql.js';
import { GroupFilterSql } from '../src/modules/grouping/infrastructure/group-filter.sql.js';
import type { IdentityApi } from '../src/modules/identity/index.js';
import type { UnitOfWork } from '../src/shared/persistence/unit-of-work.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVER_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = 'bench_filter';
const DB_URL = databaseUrl(SERVER_URL, DB);
const CARDS = Number(process.env.BENCH_FILTER_CARDS ?? 1_000_000);
const SEARCH_PROJECTS = 50;
const SEARCH_CARDS = Number(process.env.BENCH_FILTER_SEARCH_CARDS ?? 2_000);
const REQUESTS = Number(process.env.BENCH_FILTER_REQUESTS ?? 40);
const MAX_SECONDS = Number(process.env.BENCH_FILTER_MAX_SECONDS ?? 6);
/**
 * Requests of each kind before it is measured, at most WARMUP_SECONDS of
 * them: V8 optimises a request's code over its first thousand or two calls
 * (docs/PERFORMANCE.md, issue 15, eighth pass), and 3 warm-up requests left
 * the cheap filters measured on code still being compiled.
 */
const WARMUP = Number(process.env.BENCH_FILTER_WARMUP ?? 500);
const WARMUP_SECONDS = Number(process.env.BENCH_FILTER_WARMUP_SECONDS ?? 3);
const REUSE = process.env.BENCH_FILTER_REUSE === '1';
/** `BENCH_FILTER_ONLY=search,parent`: only the scenarios whose names hold one of these words; no report is written. */
const ONLY = (process.env.BENCH_FILTER_ONLY ?? '').split(',').map((w) => w.trim()).filter(Boolean);
const DOC = ONLY.length ? '-' : (process.env.BENCH_DOC ?? path.join(ROOT, 'docs/PERFORMANCE.md'));
const BEGIN = '<!-- bench:filter:begin (written by `npm run bench:filter`; edits inside are overwritten) -->';
const END = '<!-- bench:filter:end -->';

const log = (msg: string) => process.stderr.write(`[bench:filter] ${msg}\n`);

/** 1-minute load averages seen before each scenario, for the report. */
const loads: number[] = [];
const loadRange = () => (loads.length ? `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` : 'n/a');

/**
 * Before each scenario, waits up to BENCH_QUIET_WAIT seconds (default 10)
 * for the machine's load to fall below 1.5 (other work on a shared machine),
 * then notes the load the scenario ran under.
 */
async function waitForQuiet(): Promise<void> {
  const until = Date.now() + Number(process.env.BENCH_QUIET_WAIT ?? 10) * 1000;
  while (os.loadavg()[0] > 1.5 && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
  loads.push(os.loadavg()[0]);
}

interface Setup {
  apiKey: string;
  searchKey: string;
  userId: number;
  searchUserId: number;
  projectId: number;
  searchProjectIds: number[];
  /** Field and group ids the hand-written SQL names directly, as a person writing it would. */
  ids: Record<string, number>;
}

/** One question: the filter through the API, and the same question by hand. */
interface Scenario {
  name: string;
  filter: string;
  selective: boolean;
  search?: boolean;
  /** WHERE condition on `c` (a card row of the project(s)), with $1 the project (or project ids). */
  where: string;
  params: (s: Setup) => unknown[];
}

/** Scenarios whose plans go into the report. */
const PLANNED = [
  'rare title word',
  '@me (members field)',
  'number range',
  'label (#group, 1 %)',
  'compound',
  'or across modules',
  '/search: @me over 50 projects',
  '/search: column over 50 projects',
  '/search: or of two columns over 50 projects',
];

const SCENARIOS: Scenario[] = [
  { name: 'rare title word', filter: 'needle', selective: true, where: `c.title ILIKE '%needle%'`, params: () => [] },
  { name: 'common title word', filter: 'card', selective: false, where: `c.title ILIKE '%card%'`, params: () => [] },
  { name: 'ref', filter: '#500000', selective: true, where: `c.ref = 500000`, params: () => [] },
  { name: 'state', filter: 'state = waiting', selective: false, where: `c.state = 'waiting'`, params: () => [] },
  {
    name: '@me (members field)',
    filter: '@me',
    selective: true,
    where: `EXISTS (SELECT 1 FROM fields.member_values m WHERE m.card_id = c.id AND m.user_id = $2)`,
    params: (s) => [s.userId],
  },
  {
    name: 'number range',
    filter: 'Estimate >= 99',
    selective: true,
    where: `EXISTS (SELECT 1 FROM fields.scalar_values v WHERE v.card_id = c.id AND v.attribute_id = $2 AND v.value >= '99'::jsonb)`,
    params: (s) => [s.ids.estimate],
  },
  {
    name: 'date before',
    filter: 'Due < -360d',
    selective: true,
    where: `EXISTS (SELECT 1 FROM fields.scalar_values v WHERE v.card_id = c.id AND v.attribute_id = $2
                     AND v.value #>> '{}' < to_char(current_date - 360, 'YYYY-MM-DD'))`,
    params: (s) => [s.ids.due],
  },
  {
    name: 'label (#group, 1 %)',
    filter: '#Tag3',
    selective: true,
    where: `EXISTS (SELECT 1 FROM grouping.memberships m WHERE m.card_id = c.id AND m.group_id = $2)`,
    params: (s) => [s.ids.tag3],
  },
  {
    name: 'column (group_type field, 25 %)',
    filter: 'Status = Blocked',
    selective: false,
    where: `EXISTS (SELECT 1 FROM grouping.memberships m WHERE m.card_id = c.id AND m.group_id = $2)`,
    params: (s) => [s.ids.blocked],
  },
  { name: 'hlevel', filter: 'hlevel = 1', selective: true, where: `c.depth = 1`, params: () => [] },
  {
    name: 'parent',
    filter: 'parent = 7',
    selective: true,
    where: `c.parent_id = (SELECT id FROM cards.cards WHERE project_id = $1 AND ref = 7)`,
    params: () => [],
  },
  {
    name: 'compound',
    filter: 'state = in_progress and Estimate > 50 and not #Done',
    selective: false,
    where: `c.state = 'in_progress'
            AND EXISTS (SELECT 1 FROM fields.scalar_values v WHERE v.card_id = c.id AND v.attribute_id = $2 AND v.value > '50'::jsonb)
            AND NOT EXISTS (SELECT 1 FROM grouping.memberships m WHERE m.card_id = c.id AND m.group_id = $3)`,
    params: (s) => [s.ids.estimate, s.ids.done],
  },
  {
    name: 'or across modules',
    filter: '@me or #Tag3',
    selective: true,
    where: `(EXISTS (SELECT 1 FROM fields.member_values m WHERE m.card_id = c.id AND m.user_id = $2)
             OR EXISTS (SELECT 1 FROM grouping.memberships g WHERE g.card_id = c.id AND g.group_id = $3))`,
    params: (s) => [s.userId, s.ids.tag3],
  },
  {
    name: '/search: @me over 50 projects',
    filter: '@me',
    selective: true,
    search: true,
    where: `EXISTS (SELECT 1 FROM fields.member_values m WHERE m.card_id = c.id AND m.user_id = $2)`,
    params: (s) => [s.searchUserId],
  },
  {
    name: '/search: column over 50 projects',
    filter: 'Status = Doing',
    selective: false,
    search: true,
    where: `EXISTS (SELECT 1 FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id
                     WHERE m.card_id = c.id AND g.title = 'Doing')`,
    params: () => [],
  },
  {
    name: '/search: or of two columns over 50 projects',
    filter: 'Status = Doing or Status = Done',
    selective: false,
    search: true,
    where: `EXISTS (SELECT 1 FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id
                     WHERE m.card_id = c.id AND g.title IN ('Doing', 'Done'))`,
    params: () => [],
  },
];

async function generate(server: RunningServer, db: pg.Client): Promise<Setup> {
  const owner = createUser(ROOT, DB_URL, 'bench');
  const searcher = createUser(ROOT, DB_URL, 'searcher');
  const api = new ApiClient(server.port, owner.api_key, 4);
  const sapi = new ApiClient(server.port, searcher.api_key, 4);
  const org = await api.json<{ id: number }>('POST', '/organizations', { name: 'Bench' });
  const project = await api.json<{ id: number; top_level_card_id: number }>('POST', `/organizations/${org.id}/projects`, { title: 'Big' });
  const structure = await projectStructure(api, project);
  log(`filling ${CARDS} cards`);
  const t0 = Date.now();
  await fill(db, { projectId: project.id, orgId: org.id, top: project.top_level_card_id, n: CARDS, me: owner.id, ...structure });
  log(`filled in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const many = await sapi.json<{ id: number }>('POST', '/organizations', { name: 'Many' });
  const searchProjectIds: number[] = [];
  for (let i = 0; i < SEARCH_PROJECTS; i++) {
    const p = await sapi.json<{ id: number; top_level_card_id: number }>('POST', `/organizations/${many.id}/projects`, { title: `P${i}` });
    const s = await projectStructure(sapi, p);
    await fill(db, { projectId: p.id, orgId: many.id, top: p.top_level_card_id, n: SEARCH_CARDS, me: searcher.id, ...s });
    searchProjectIds.push(p.id);
  }
  log('VACUUM ANALYZE');
  await db.query('VACUUM (ANALYZE)');
  api.close();
  sapi.close();
  const setup: Setup = {
    apiKey: owner.api_key,
    searchKey: searcher.api_key,
    userId: owner.id,
    searchUserId: searcher.id,
    projectId: project.id,
    searchProjectIds,
    ids: { estimate: structure.estimate, due: structure.due, tag3: structure.tags[3], blocked: structure.status[3], done: structure.status[2] },
  };
  await db.query(`CREATE TABLE public.bench_filter_setup (setup jsonb)`);
  await db.query(`INSERT INTO public.bench_filter_setup VALUES ($1)`, [JSON.stringify(setup)]);
  return setup;
}

interface Structure {
  estimate: number;
  due: number;
  owners: number;
  notes: number;
  status: number[];
  statusType: number;
  tags: number[];
  tagsType: number;
}

/** Fields and groups through the API, as a user would make them. */
async function projectStructure(api: ApiClient, p: { id: number; top_level_card_id: number }): Promise<Structure> {
  const field = async (name: string, type: string) =>
    (await api.json<{ id: number }>('POST', `/projects/${p.id}/attributes`, { name, type })).id;
  const groupType = async (name: string, one: boolean, titles: string[]) => {
    const t = await api.json<{ id: number }>('POST', `/projects/${p.id}/group-types`, { name, one_group_per_card: one });
    const ids: number[] = [];
    for (const title of titles) ids.push((await api.json<{ id: number }>('POST', `/cards/${p.top_level_card_id}/groups`, { type_id: t.id, title })).id);
    return { type: t.id, ids };
  };
  const status = await groupType('Status', true, ['Todo', 'Doing', 'Done', 'Blocked']);
  const tags = await groupType('Tags', false, Array.from({ length: 10 }, (_, i) => `Tag${i}`));
  return {
    estimate: await field('Estimate', 'number'),
    due: await field('Due', 'date'),
    owners: await field('Owners', 'members'),
    notes: await field('Notes', 'text'),
    status: status.ids,
    statusType: status.type,
    tags: tags.ids,
    tagsType: tags.type,
  };
}

/**
 * n cards in two levels (about √n under the top-level card, the rest under
 * them), then values: Estimate on 70 % (0…99), Due on 50 % (±1 year), Owners
 * on 30 % (one of 20 users; the caller on 0.1 %), Status on every card,
 * Tags on 10 %; "needle" in 10 titles; created over the last two years.
 */
async function fill(db: pg.Client, f: Structure & { projectId: number; orgId: number; top: number; n: number; me: number }): Promise<void> {
  const users = (
    await db.query<{ id: string }>(
      `INSERT INTO identity.users (username, email)
       SELECT 'filler' || g || '_' || $1, 'filler' || g || '_' || $1 || '@example.com' FROM generate_series(1, 20) g
       ON CONFLICT DO NOTHING RETURNING id`,
      [f.projectId],
    )
  ).rows.map((r) => Number(r.id));
  const level1 = Math.max(1, Math.round(Math.sqrt(f.n)));
  const words = `ARRAY['alpha','bravo','charlie','delta','echo','foxtrot','golf','hotel','india','juliet','kilo','lima']`;
  await db.query(
    `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, state, position,
                              created_at, updated_at)
     SELECT $1, $2, $3, ARRAY[$3]::bigint[], 1, g, 'Card ' || g || ' ' || (${words})[1 + g % 12], 'undecided', g - 1,
            now() - (g % 730) * interval '1 day', now()
       FROM generate_series(1, $4::int) g`,
    [f.projectId, f.orgId, f.top, level1],
  );
  await db.query(
    `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, state, position,
                              created_at, updated_at)
     SELECT $1, $2, p.id, ARRAY[$3, p.id]::bigint[], 2, g,
            'Card ' || g || ' ' || CASE WHEN g % 99991 = 17 THEN 'needle' ELSE (${words})[1 + g % 12] END,
            (ARRAY['undecided','dropped','accepted','in_progress','waiting','completed','closed'])[1 + (g::bigint * 7919) % 7],
            (g - $4 - 1) / $4, now() - (g % 730) * interval '1 day', now()
       FROM generate_series($4::int + 1, $5::int) g
       JOIN cards.cards p ON p.project_id = $1 AND p.ref = 1 + (g - $4 - 1) % $4`,
    [f.projectId, f.orgId, f.top, level1, f.n],
  );
  await db.query(
    `UPDATE cards.project_counters SET next_ref = $2::int + 1, card_count = $2, visible_count = $2 WHERE project_id = $1`,
    [f.projectId, f.n],
  );
  const cards = `FROM cards.cards c WHERE c.project_id = ${Number(f.projectId)} AND c.depth > 0`;
  await db.query(
    `INSERT INTO fields.scalar_values (card_id, attribute_id, value)
     SELECT c.id, $1, to_jsonb((c.ref::bigint * 7919) % 100) ${cards} AND c.ref % 10 < 7`,
    [f.estimate],
  );
  await db.query(
    `INSERT INTO fields.scalar_values (card_id, attribute_id, value)
     SELECT c.id, $1, to_jsonb(to_char(current_date + ((c.ref * 31) % 731 - 365), 'YYYY-MM-DD')) ${cards} AND c.ref % 2 = 0`,
    [f.due],
  );
  await db.query(
    `INSERT INTO fields.member_values (card_id, attribute_id, user_id, position)
     SELECT c.id, $1, CASE WHEN c.ref % 1000 = 3 THEN $2 ELSE ($3::bigint[])[1 + c.ref % 20] END, 0
       ${cards} AND (c.ref % 10 < 3 OR c.ref % 1000 = 3)`,
    [f.owners, f.me, users],
  );
  await db.query(
    `INSERT INTO grouping.memberships (card_id, group_id, type_id, position)
     SELECT c.id, ($1::bigint[])[1 + c.ref % 4], $2, row_number() OVER (PARTITION BY c.ref % 4 ORDER BY c.id) - 1 ${cards}`,
    [f.status, f.statusType],
  );
  await db.query(
    `INSERT INTO grouping.memberships (card_id, group_id, type_id, position)
     SELECT c.id, ($1::bigint[])[1 + (c.ref / 10) % 10], $2, row_number() OVER (PARTITION BY (c.ref / 10) % 10 ORDER BY c.id) - 1
       ${cards} AND c.ref % 10 = 5`,
    [f.tags, f.tagsType],
  );
}

async function setUp(): Promise<{ server: RunningServer; setup: Setup; pool: pg.Pool }> {
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  const exists = (await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [DB])).rowCount;
  await admin.end();
  let setup: Setup | null = null;
  if (exists && REUSE) {
    const db = new pg.Client({ connectionString: DB_URL });
    await db.connect();
    const rows = await db.query<{ setup: Setup }>(`SELECT setup FROM public.bench_filter_setup`).catch(() => ({ rows: [] }));
    await db.end();
    setup = rows.rows[0]?.setup ?? null;
    if (setup) log(`reusing ${DB}`);
  }
  if (!setup) {
    if (exists) await dropScratchDatabase(SERVER_URL, DB);
    await createScratchDatabase(SERVER_URL, DB);
  }
  log('starting the server (it migrates the database)');
  const server = await startServer(ROOT, DB_URL);
  if (setup) {
    // A reused database: migrations since it was filled may have added
    // indexes or statistics, which ANALYZE fills.
    const db = new pg.Client({ connectionString: DB_URL });
    await db.connect();
    await db.query('ANALYZE').finally(() => db.end());
  }
  if (!setup) {
    const db = new pg.Client({ connectionString: DB_URL });
    await db.connect();
    try {
      setup = await generate(server, db);
    } catch (error) {
      await server.stop();
      throw error;
    } finally {
      await db.end();
    }
  }
  return { server, setup, pool: new pg.Pool({ connectionString: DB_URL, max: 4 }) };
}

/** A statement the filter service sent, with the SET LOCAL settings of its transaction. */
interface Captured {
  sql: string;
  params: unknown[];
  settings: string[];
}

interface Measured {
  scenario: Scenario;
  total: number;
  app: Timing;
  appIds: Timing;
  /** The filter service's statements alone, on the bench's connections. */
  service: Timing;
  hand: Timing;
}

/** The hand-written page and count, side by side on two connections (as the app runs them). */
function handQueries(s: Scenario, setup: Setup) {
  const scope = s.search ? `c.project_id = ANY($1::bigint[])` : `c.project_id = $1`;
  const where = `${scope} AND c.depth > 0 AND NOT c.hidden AND ${s.where}`;
  const values = [s.search ? setup.searchProjectIds : setup.projectId, ...s.params(setup)];
  return {
    page: { text: `SELECT c.id, c.ref, c.title, c.state, c.parent_id FROM cards.cards c WHERE ${where} ORDER BY c.id LIMIT 100`, values },
    count: { text: `SELECT count(*)::int AS n FROM cards.cards c WHERE ${where}`, values },
  };
}

/** Sequential runs of `task`: the warm-up, then up to REQUESTS measured ones. */
async function timed(task: () => Promise<void>): Promise<Timing> {
  await runPool(WARMUP, 1, task, { maxSeconds: WARMUP_SECONDS, minCount: 3 });
  const latencies: number[] = [];
  const t = await runPool(REQUESTS, 1, task, { maxSeconds: MAX_SECONDS, minCount: 10, latencies });
  return summarize(latencies, t.seconds);
}

/**
 * The floor under every filter's figure: `GET /attribute-types`, an
 * authenticated request that reads nothing but the caller's key, on the
 * same server and warm-up as the filters.
 */
async function floor(setup: Setup, server: RunningServer): Promise<Timing> {
  await waitForQuiet();
  const api = new ApiClient(server.port, setup.apiKey, 1);
  const task = async () => {
    const r = await api.request('GET', '/attribute-types');
    if (r.status !== 200) throw new Error(`GET /attribute-types → ${r.status}`);
  };
  const timing = await timed(task);
  api.close();
  log(`floor (GET /attribute-types): ${timing.medianMs.toFixed(2)} ms`);
  return timing;
}

async function measure(s: Scenario, setup: Setup, server: RunningServer, pool: pg.Pool): Promise<Measured> {
  await waitForQuiet();
  const api = new ApiClient(server.port, s.search ? setup.searchKey : setup.apiKey, 1);
  const base = s.search ? '/search' : `/projects/${setup.projectId}/cards`;
  const url = `${base}?per_page=100&filter=${encodeURIComponent(s.filter)}`;
  const hand = handQueries(s, setup);
  const first = await api.request('GET', url);
  if (first.status !== 200) throw new Error(`GET ${url} → ${first.status}: ${first.body.slice(0, 300)}`);
  const appIds = (JSON.parse(first.body) as Array<{ id: number }>).map((c) => c.id);
  const [page, count] = await Promise.all([pool.query<{ id: string }>(hand.page), pool.query<{ n: number }>(hand.count)]);
  const handIds = page.rows.map((r) => Number(r.id));
  const total = Number(first.headers['x-service-total']);
  if (appIds.join() !== handIds.join() || total !== count.rows[0].n) {
    throw new Error(`${s.name}: the app (${total}: ${appIds.slice(0, 5)}…) and the hand-written SQL (${count.rows[0].n}: ${handIds.slice(0, 5)}…) disagree`);
  }
  const appTask = async () => {
    const r = await api.request('GET', url);
    if (r.status !== 200) throw new Error(`GET ${url} → ${r.status}`);
  };
  const idsTask = async () => {
    const r = await api.request('GET', `${url}&only_ids=true`);
    if (r.status !== 200) throw new Error(`GET ${url}&only_ids=true → ${r.status}`);
  };
  const handTask = async () => {
    await Promise.all([pool.query(hand.page), pool.query(hand.count)]);
  };
  const filter = filterService(pool);
  const serviceTask = async () => {
    await filter(s, setup);
  };
  const result = {
    scenario: s,
    total,
    hand: await timed(handTask),
    app: await timed(appTask),
    appIds: await timed(idsTask),
    service: await timed(serviceTask),
  };
  api.close();
  log(
    `${s.name}: ${total} cards; app ${result.app.medianMs.toFixed(1)} ms (only_ids ${result.appIds.medianMs.toFixed(1)} ms, ` +
      `filter service alone ${result.service.medianMs.toFixed(1)} ms), hand-written ${result.hand.medianMs.toFixed(1)} ms`,
  );
  return result;
}

/**
 * The filter service of the build on a unit of work whose queries go to the
 * bench's pool (and are recorded in `captured`): what the app's filter costs
 * at the database, without HTTP, authentication and the card JSON. Runs a
 * scenario as the API does (a page of 100 and one more id).
 */
function filterService(pool: pg.Pool, captured: Captured[] = []) {
  // A transaction (`uow.run`: the count's SET LOCAL) holds one client of the pool.
  // The SET LOCAL statements a transaction sent are kept with its queries, so their plans are explained under them.
  const tx = new AsyncLocalStorage<{ client: pg.PoolClient; settings: string[] }>();
  const uow = {
    manager: {
      query: async (sql: string, params: unknown[] = []) => {
        const t = tx.getStore();
        if (t && sql.startsWith('SET LOCAL')) t.settings.push(sql);
        else captured.push({ sql, params, settings: [...(t?.settings ?? [])] });
        return (await (t?.client ?? pool).query(sql, params)).rows;
      },
    },
    get inTransaction() {
      return tx.getStore() !== undefined;
    },
    run: async <T>(work: () => Promise<T>): Promise<T> => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await tx.run({ client, settings: [] }, work);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
  } as unknown as UnitOfWork;
  const identity = { usersNamed: async () => [] } as unknown as IdentityApi;
  const service = new CardFilterService(identity, new CardFilterSql(uow), new FieldFilterSql(uow), new GroupFilterSql(uow));
  return (s: Scenario, setup: Setup) => {
    const projectIds = s.search ? setup.searchProjectIds : [setup.projectId];
    const actor = { userId: s.search ? setup.searchUserId : setup.userId, username: 'bench', isAdmin: false, scopes: null };
    return service.run({ text: s.filter, parameter: 'filter', projectIds, withArchived: false, limit: 101, from: { offset: 0 } }, actor);
  };
}

/**
 * EXPLAIN ANALYZE of the page query the app runs for some filters: the
 * filter service of the build, on a unit of work whose queries go to the
 * bench's pool and are recorded, so the plan is of the very SQL the app sends.
 */
async function plans(setup: Setup, pool: pg.Pool, names: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const captured: Captured[] = [];
  const run = filterService(pool, captured);
  for (const s of SCENARIOS.filter((x) => names.includes(x.name))) {
    captured.length = 0;
    await run(s, setup);
    // The page query (and the count, when the page was full), as the service sent them.
    for (const q of captured.filter((x) => /\bcards\.cards c\b/.test(x.sql))) {
      // count(*) of a condition, count(DISTINCT …) of candidates: either is the count.
      const what = /\bcount\(/.test(q.sql) ? 'count' : 'page';
      const client = await pool.connect();
      let rows: Array<{ 'QUERY PLAN': string }>;
      try {
        await client.query('BEGIN');
        for (const setting of q.settings) await client.query(setting);
        rows = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${q.sql}`, q.params)).rows;
      } finally {
        await client.query('COMMIT');
        client.release();
      }
      const plan = rows.map((r) => r['QUERY PLAN']).filter((line) => !line.startsWith('Planning Time'));
      const under = q.settings.length ? ` (under ${q.settings.map((x) => `\`${x}\``).join(', ')})` : '';
      out.set(`${s.name} (\`${s.filter}\`), ${what}${under}`, plan.join('\n'));
    }
  }
  return out;
}

function report(results: Measured[], floorTiming: Timing, explain: Map<string, string>, indexes: string[]): string {
  const f = (n: number) => n.toFixed(1);
  const f2 = (n: number) => n.toFixed(2);
  const lines = [
    BEGIN,
    '',
    `Run ${new Date().toISOString().slice(0, 16)} UTC on ${CARDS.toLocaleString('en').replace(/,/g, ' ')} cards (one project) and`,
    `${SEARCH_PROJECTS} projects × ${SEARCH_CARDS} cards (/search); medians of up to ${REQUESTS} sequential requests; the`,
    'hand-written side runs its page (100 rows) and its count side by side on two connections. "filter service" is the',
    "app's filter statements alone (lookups, page, count) sent from the bench process: the app's time without HTTP,",
    `authentication, the project check and the card JSON. Load average (1 min) during the run: ${loadRange()}.`,
    `The floor under every "app" figure, an authenticated request that reads nothing (\`GET /attribute-types\`):`,
    `${f2(floorTiming.medianMs)} ms median. "service / SQL" compares the filter's own statements with the hand-written ones`,
    '(for information; the target is judged on "app / SQL"). A missed row whose floor plus its hand-written SQL is',
    'already over 1.5× the SQL says so: no filter code can bring it within 1.5× through HTTP.',
    '',
    '| filter | matches | app (ms) | app only_ids (ms) | filter service (ms) | hand-written SQL (ms) | app / SQL | service / SQL | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    const ratio = r.app.medianMs / r.hand.medianMs;
    const limit = r.scenario.search ? 50 : r.scenario.selective ? 20 : null;
    const met = ratio <= 1.5 && (limit === null || r.app.medianMs < limit);
    // Through HTTP no answer comes faster than the floor: where the floor
    // plus the hand-written SQL is already over 1.5× the SQL, the ratio is out
    // of reach of any filter code, and the row says so.
    const reach = (floorTiming.medianMs + r.hand.medianMs) / r.hand.medianMs;
    const beyond = !met && reach > 1.5 ? ` (floor + SQL alone: ${reach.toFixed(2)}×)` : '';
    const target = `≤ 1.5×${limit === null ? '' : `, < ${limit} ms`}: ${met ? 'met' : '**missed**'}${beyond}`;
    const serviceRatio = r.service.medianMs / r.hand.medianMs;
    lines.push(
      `| ${r.scenario.name}: \`${r.scenario.filter}\` | ${r.total} | ${f(r.app.medianMs)} | ${f(r.appIds.medianMs)} | ${f(r.service.medianMs)} | ${f(r.hand.medianMs)} | ${ratio.toFixed(2)} | ${serviceRatio.toFixed(2)} | ${target} |`,
    );
  }
  lines.push('', 'Indexes the filters use (besides the primary keys):', '', ...indexes.map((i) => `- \`${i}\``));
  for (const [name, plan] of explain) lines.push('', `Plan of the app's query, ${name} (EXPLAIN ANALYZE, costs and timing off):`, '', '```', plan, '```');
  lines.push('', END);
  return lines.join('\n');
}

function writeSection(block: string): void {
  if (DOC === '-') return; // `BENCH_DOC=-`: no file is written, as with npm run bench
  const doc = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '# Performance\n';
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const next = start >= 0 && end > start ? doc.slice(0, start) + block + doc.slice(end + END.length) : `${doc.trimEnd()}\n\n## Filters (\`npm run bench:filter\`)\n\n${block}\n`;
  fs.writeFileSync(DOC, next);
}

async function main(): Promise<void> {
  const { server, setup, pool } = await setUp();
  try {
    const floorTiming = await floor(setup, server);
    const results: Measured[] = [];
    const chosen = ONLY.length ? SCENARIOS.filter((x) => ONLY.some((w) => x.name.includes(w))) : SCENARIOS;
    for (const s of chosen) results.push(await measure(s, setup, server, pool));
    const indexes = (
      await pool.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname IN ('cards', 'fields', 'grouping')
           AND indexname IN ('cards_project_visible_idx', 'cards_ref_key', 'cards_children_idx', 'cards_title_trgm_idx',
                             'scalar_values_number_idx', 'scalar_values_string_day_idx', 'member_values_user_idx',
                             'memberships_position_key', 'memberships_card_type_idx', 'memberships_group_card_idx', 'groups_project_title_idx',
                             'member_values_pkey', 'memberships_pkey')
         ORDER BY indexname`,
      )
    ).rows.map((r) => r.indexdef.replace(/\s+/g, ' '));
    writeSection(report(results, floorTiming, await plans(setup, pool, PLANNED), indexes));
    if (DOC !== '-') log(`wrote ${DOC}`);
  } finally {
    await pool.end();
    await server.stop();
  }
}

main().catch((e: unknown) => {
  log(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
