/**
 * `npm run bench:ab -- <other checkout>`: the server CPU per request of two
 * builds, measured side by side (docs/PERFORMANCE.md, issue 15, fourth pass).
 *
 * Both servers run at once, each on a scratch database of its own; requests
 * alternate between them in slices, so both meet the same machine speed. On
 * a shared virtual machine one-server runs of the same build differ by
 * 15–25 % from one minute to the next; paired runs of a build against itself
 * differ by up to 5 %. A is the other checkout (built: `npm run build` and
 * `tsc -p bench/tsconfig.json` there), B this one.
 *
 * Settings: AB_N requests per kind and side (default 3000; a third of that
 * for listings), AB_SLICE requests per slice (200), AB_WARMUP requests of
 * each kind and side before it is measured (1500), AB_KINDS a comma list of
 * health, types, create, attribute (a number set on a card of that project),
 * list, listValued (a page of cards with values), listIds (a page of ids),
 * children (the 100 valued cards as children), card (default: all but listIds
 * and children).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient, type HttpResult } from './http.js';
import { processCpuSeconds } from './machine.js';
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from './raw-sql.js';
import { createUser, startServer, type RunningServer } from './server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const N = Number(process.env.AB_N ?? 3000);
const SLICE = Number(process.env.AB_SLICE ?? 200);
/** Requests of each kind and side before it is measured: V8 optimises a request's code over its first thousand or two calls. */
const WARMUP = Number(process.env.AB_WARMUP ?? 1500);
const KINDS = (process.env.AB_KINDS ?? 'health,types,create,attribute,list,listValued,card').split(',');

type Request = (i: number) => Promise<HttpResult>;

interface Side {
  name: string;
  server: RunningServer;
  database: string;
  api: ApiClient;
  requests: Record<string, Request>;
}

/** Starts one build's server on a fresh database, with a project to create cards in and one of 100 cards to list. */
async function startSide(name: string, root: string): Promise<Side> {
  const database = `cardwork_bench_ab_${name.toLowerCase()}_${process.pid}`;
  await createScratchDatabase(SERVER_URL, database);
  const url = databaseUrl(SERVER_URL, database);
  const server = await startServer(root, url);
  const key = createUser(root, url, 'ab').api_key;
  const api = new ApiClient(server.port, key, 1);
  type Project = { id: number; top_level_card_id: number };
  const org = await api.json<{ id: number }>('POST', '/organizations', { name: 'AB' });
  const writes = await api.json<Project>('POST', `/organizations/${org.id}/projects`, { title: 'writes' });
  const listed = await api.json<Project>('POST', `/organizations/${org.id}/projects`, { title: 'listed' });
  for (let i = 0; i < 100; i++) await api.json('POST', `/cards/${listed.top_level_card_id}/children`, { title: `card ${i}` });
  const card = await api.json<{ id: number }>('POST', `/cards/${writes.top_level_card_id}/children`, { title: 'read' });
  // A project whose cards have values: a number, members and likes.
  const valued = await api.json<Project>('POST', `/organizations/${org.id}/projects`, { title: 'valued' });
  for (const [name, type] of [['Estimate', 'number'], ['Owners', 'members'], ['Votes', 'likes']]) {
    await api.json('POST', `/projects/${valued.id}/attributes`, { name, type });
  }
  const me = await api.json<{ id: number }>('GET', '/me');
  let firstValued = 0;
  for (let i = 0; i < 100; i++) {
    const c = await api.json<{ id: number }>('POST', `/cards/${valued.top_level_card_id}/children`, { title: `valued ${i}` });
    await api.json('POST', `/cards/${c.id}/attributes`, { Estimate: i, Owners: [me.id], Votes: 1 });
    firstValued ||= c.id;
  }
  return {
    name,
    server,
    database,
    api,
    requests: {
      health: () => api.request('GET', '/health'),
      types: () => api.request('GET', '/attribute-types'),
      create: (i) => api.request('POST', `/cards/${writes.top_level_card_id}/children`, { title: `c${i}` }),
      attribute: (i) => api.request('POST', `/cards/${firstValued}/attributes/Estimate`, { value: 1000 + i }),
      list: () => api.request('GET', `/projects/${listed.id}/cards?per_page=100`),
      listValued: () => api.request('GET', `/projects/${valued.id}/cards?per_page=100`),
      listIds: () => api.request('GET', `/projects/${listed.id}/cards?per_page=100&only_ids=true`),
      children: () => api.request('GET', `/cards/${valued.top_level_card_id}/children`),
      card: () => api.request('GET', `/cards/${card.id}`),
    },
  };
}

/** CPU per request and median latency (ms) of each side for one kind of request, slices alternating A B, B A, … */
async function measure(kind: string, sides: [Side, Side]): Promise<Array<{ cpuMs: number; medianMs: number }>> {
  const count = kind.startsWith('list') || kind === 'children' ? Math.round(N / 3) : N;
  const cpu = [0, 0];
  const latencies: number[][] = [[], []];
  for (const side of sides) for (let i = 0; i < WARMUP; i++) await expectOk(side, kind, i);
  for (let done = 0, slice = 0; done < count; done += SLICE, slice++) {
    for (const s of slice % 2 ? [1, 0] : [0, 1]) {
      const before = processCpuSeconds(sides[s].server.pid) ?? 0;
      for (let i = 0; i < SLICE; i++) {
        const started = performance.now();
        await expectOk(sides[s], kind, done + i);
        latencies[s].push(performance.now() - started);
      }
      cpu[s] += (processCpuSeconds(sides[s].server.pid) ?? 0) - before;
    }
  }
  return cpu.map((seconds, s) => ({
    cpuMs: (seconds * 1000) / Math.ceil(count / SLICE) / SLICE,
    medianMs: latencies[s].sort((x, y) => x - y)[latencies[s].length >> 1],
  }));
}

async function expectOk(side: Side, kind: string, i: number): Promise<void> {
  const res = await side.requests[kind](i);
  if (res.status >= 300) throw new Error(`${side.name} ${kind}: ${res.status} ${res.body.slice(0, 300)}`);
}

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) throw new Error('usage: npm run bench:ab -- <path of the other checkout, built>');
  const sides: Side[] = [];
  try {
    sides.push(await startSide('A', path.resolve(other)));
    sides.push(await startSide('B', ROOT));
    console.log(`A ${path.resolve(other)}\nB ${ROOT}\nserver CPU per request and median latency (ms), ${N} requests per kind and side in slices of ${SLICE}`);
    for (const kind of KINDS) {
      const [a, b] = await measure(kind, sides as [Side, Side]);
      console.log(
        `${kind.padEnd(10)} CPU A ${a.cpuMs.toFixed(3)}  B ${b.cpuMs.toFixed(3)}  B/A ${(b.cpuMs / a.cpuMs).toFixed(3)}` +
          `   median A ${a.medianMs.toFixed(3)}  B ${b.medianMs.toFixed(3)}  B/A ${(b.medianMs / a.medianMs).toFixed(3)}`,
      );
    }
  } finally {
    for (const side of sides) {
      side.api.close();
      await side.server.stop();
      await dropScratchDatabase(SERVER_URL, side.database);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
