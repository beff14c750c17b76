import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadOperations, type Operation, type Schema } from '../../support/openapi.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

// Bounded fuzzing from the served OpenAPI document (issue 13): every operation,
// with random and boundary values for every parameter and body property.
// Seeded: the seed is printed, FUZZ_SEED replays a run, FUZZ_N sets its size.
// Expected: no answer ≥ 500, and every error is problem+json.

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const N = Number(process.env.FUZZ_N ?? 2000);

/** mulberry32: small, fast, and the same sequence for the same seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)], chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof rng>;

const BAD_PATH_IDS = ['0', '-1', '1.5', '0x10', '1e3', '%201', '1%20', '+1', '01', 'abc', 'null', '9007199254740993', '99999999999999999999', '%00', '%C3%A9', 'x'.repeat(3000)];
const ODD_STRINGS = ['', ' ', 'x', 'é', '🚀', 'a\u0000b', '\ud800', '<script>', "' OR 1=1 --", '%s%n', '../../etc/passwd', 'x'.repeat(1025), 'y'.repeat(100_001), '2026-02-30', '2026-01-01', '2026-01-01 10:00:00', '2026-01-01 -> 2026-01-05', '@nobody', 'true', '0', '-1', '1e309', 'NaN'];
const ODD_NUMBERS = [0, -1, 1, 2, 1.5, -0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e300, -1e300, Number.MIN_VALUE];

/** Ids of real resources, by the segment or property that names them, so requests reach past the 404s. */
type Pools = Record<string, Array<number | string>>;

describe('fuzzing every operation of the OpenAPI document', () => {
  let t: TestApp;
  let u: TestUser;
  let other: TestUser;
  let ops: Operation[];
  const pools: Pools = {};
  const add = (kind: string, id: number | string) => (pools[kind] ??= []).push(id);

  async function seedWorkspace(round: number): Promise<void> {
    const ws = workspaceClient(t);
    const orgId = await ws.team(u, `fuzz ${round}`);
    add('organizations', orgId);
    if (round === 0) await ws.addMember(u, orgId, other, 'member');
    const project = await ws.project(u, orgId);
    add('projects', project.id);
    add('cards', project.top_level_card_id);
    const post = async (path: string, body: object) => (await t.http.post(`${API}${path}`).set(as(u)).send(body)).body;
    for (let i = 0; i < 3; i++) add('cards', (await post(`/cards/${project.top_level_card_id}/children`, { title: `c${i}` })).id);
    for (const type of ['text', 'content', 'number', 'bool', 'date', 'time', 'members', 'likes', 'relationships', 'files']) {
      const a = await post(`/projects/${project.id}/attributes`, { name: `F ${type}`, type, ...(type === 'date' ? { options: { time: true } } : {}) });
      add('attributes', a.id);
      add('attr', a.name);
    }
    const model = await post(`/projects/${project.id}/models`, { name: 'Bug' });
    add('models', model.id);
    const gt = await post(`/projects/${project.id}/group-types`, { name: 'Status', one_group_per_card: true });
    add('group-types', gt.id);
    add('attr', 'Status');
    const group = await post(`/cards/${project.top_level_card_id}/groups`, { type_id: gt.id, title: 'Todo' });
    add('groups', group.id);
    // Spare keys only: revoking the key the fuzzer sends would end the run.
    for (const k of [1, 2]) add('api-keys', (await post('/me/api-keys', { name: `spare ${k}` })).id);
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '10000000', MAX_UPLOAD_BYTES: String(256 * 1024) } });
    u = await t.user();
    other = await t.user();
    add('userId', u.id);
    add('userId', other.id);
    await seedWorkspace(0);
    ops = (await loadOperations(t.http)).filter((o) => o.path.startsWith(`${API}/`));
    console.log(`fuzz: seed ${SEED} (FUZZ_SEED=${SEED} replays it), ${N} requests over ${ops.length} operations`);
  });
  afterAll(() => t.close());

  const idKind: Record<string, string> = {
    parent_id: 'cards',
    card_id: 'cards',
    group_id: 'groups',
    type_id: 'group-types',
    model_id: 'models',
    project_id: 'projects',
    organization_id: 'organizations',
    attribute_id: 'attributes',
    user: 'userId',
  };

  function anyValue(r: Rng, depth = 0): unknown {
    switch (r.int(depth > 2 ? 4 : 7)) {
      case 0:
        return r.pick(ODD_STRINGS);
      case 1:
        return r.pick(ODD_NUMBERS);
      case 2:
        return r.pick([true, false, null]);
      case 3:
        return r.pick(Object.values(pools).flat());
      case 4:
        return Array.from({ length: r.int(4) }, () => anyValue(r, depth + 1));
      case 5:
        return Object.fromEntries(Array.from({ length: r.int(3) }, () => [r.pick(['value', 'start', 'end', 'name', 'data', 'id', '__proto__', 'constructor']), anyValue(r, depth + 1)]));
      default:
        return `@${r.pick([u.username, other.username, 'ghost'])}`;
    }
  }

  function valueFor(r: Rng, name: string, s: Schema): unknown {
    if (r.chance(0.15)) return anyValue(r);
    const kind = idKind[name];
    if (kind && pools[kind] && r.chance(0.6)) return r.pick(pools[kind]);
    if (s.enum?.length) return r.chance(0.8) ? r.pick(s.enum) : r.pick(ODD_STRINGS);
    if (s.oneOf?.length) return valueFor(r, name, r.pick(s.oneOf));
    switch (s.type) {
      case 'integer':
      case 'number':
        return r.chance(0.7) ? r.pick([0, 1, 2, 5, ...(s.minimum !== undefined ? [s.minimum, s.minimum - 1] : [])]) : r.pick(ODD_NUMBERS);
      case 'boolean':
        return r.pick([true, false, 'yes', 0]);
      case 'string':
        return r.chance(0.6) ? `v${r.int(1000)}` : r.pick(ODD_STRINGS);
      case 'array':
        return Array.from({ length: r.int(4) }, () => valueFor(r, name, s.items ?? {}));
      case 'object':
        return bodyFor(r, s);
      default:
        return anyValue(r);
    }
  }

  function bodyFor(r: Rng, s: Schema | undefined): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    const properties = Object.entries(s?.properties ?? {});
    for (const [name, prop] of properties) if (s?.required?.includes(name) ? r.chance(0.9) : r.chance(0.5)) body[name] = valueFor(r, name, prop);
    if (s?.additionalProperties || !properties.length) {
      for (let i = r.int(3); i > 0; i--) body[r.chance(0.7) && pools.attr ? String(r.pick(pools.attr)) : r.pick(ODD_STRINGS) || 'k'] = anyValue(r);
    }
    if (r.chance(0.05)) body[`unknown_${r.int(9)}`] = 1;
    return body;
  }

  function pathFor(r: Rng, op: Operation): string {
    const segments = op.path.split('/');
    return segments
      .map((seg, i) => {
        if (!seg.startsWith(':')) return seg;
        const kind = seg === ':id' ? segments[i - 1] : seg.slice(1);
        const pool = pools[kind];
        if (pool && r.chance(0.75)) return encodeURIComponent(String(r.pick(pool)));
        return kind === 'attr' && r.chance(0.5) ? encodeURIComponent(r.pick(ODD_STRINGS.filter((x) => x && !/[\ud800-\udfff]/.test(x)))) : r.pick(BAD_PATH_IDS);
      })
      .join('/');
  }

  function queryFor(r: Rng, op: Operation): Record<string, string> {
    const q: Record<string, string> = {};
    for (const p of op.queryParams) {
      if (!r.chance(0.5)) continue;
      q[p.name] = r.chance(0.5) ? r.pick(['1', '2', '100', '1000', 'true', 'false', '#1', 'title ~= x', 'state = closed and not @me']) : r.pick(ODD_STRINGS.filter((x) => x.length < 3000));
    }
    return q;
  }

  it('answers every generated request below 500, with problem+json for every error', async () => {
    const r = rng(SEED);
    const failures: string[] = [];
    const slow: string[] = [];
    const statuses: Record<number, number> = {};
    const began = Date.now();
    for (let i = 0; i < N; i++) {
      if (i > 0 && i % 400 === 0) await seedWorkspace(i / 400);
      const op = r.pick(ops);
      const path = pathFor(r, op);
      const query = queryFor(r, op);
      const writes = op.method !== 'GET';
      let req = t.http[op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).query(query);
      req = req.set(as(r.chance(0.9) ? u : other));
      let sent: unknown;
      if (writes && r.chance(0.95)) {
        const shape = r.int(20);
        if (shape === 0) {
          // Any JSON document at all, not only objects.
          sent = anyValue(r);
          req = req.set('Content-Type', 'application/json').send(JSON.stringify(sent));
        } else if (shape === 1 || shape === 2) {
          // Form fields, urlencoded or multipart (every route takes both; the upload routes read their own multipart).
          sent = Object.fromEntries(Object.entries(bodyFor(r, op.body)).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]));
          if (shape === 1) req = req.type('form').send(sent as Record<string, string>);
          else for (const [k, v] of Object.entries(sent as Record<string, string>)) req = req.field(k, v);
        } else {
          sent = bodyFor(r, op.body);
          req = req.send(sent as object);
        }
      }
      const started = Date.now();
      const res = await req;
      const ms = Date.now() - started;
      if (ms > 1000) slow.push(`${ms} ms #${i} ${op.method} ${op.path}`);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const where = `#${i} ${op.method} ${path.slice(0, 200)}?${new URLSearchParams(query).toString().slice(0, 200)} ${JSON.stringify(sent)?.slice(0, 300)}`;
      if (res.status >= 500) failures.push(`${where} → ${res.status} ${res.text.slice(0, 200)}`);
      else if (res.status >= 400 && (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '') || res.body.status !== res.status)) {
        failures.push(`${where} → ${res.status} not problem+json: ${res.headers['content-type']} ${res.text.slice(0, 120)}`);
      }
    }
    console.log(`fuzz: ${N} requests in ${Date.now() - began} ms, by status ${JSON.stringify(statuses)}${slow.length ? `; slow: ${slow.slice(0, 10).join(', ')}` : ''}`);
    if (failures.length) console.log(`fuzz seed ${SEED}:\n${failures.join('\n')}`);
    expect(failures).toEqual([]);
  }, 60_000 + N * 100);
});
