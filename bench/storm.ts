/**
 * `npm run bench:storm`: a random concurrent write storm over one project,
 * then the database's invariants checked in SQL. The built server on a
 * scratch database; a team of four users, a project of a few hundred cards
 * in a tree with fields of several types (relationships, members, files,
 * likes among them), models, group types and groups, made through the API.
 * Then BENCH_STORM_WORKERS writers (24) send writes of kinds picked at
 * random for BENCH_STORM_SECONDS (60): every card, value, grouping, model,
 * field and comment write the API has (the second race of
 * test/e2e/cards/lock-order.e2e-spec.ts, widened). Each answer is counted
 * by kind and status: 200/201/400/404/409 are what a write may answer while
 * others change what it names; any 5xx (or a dropped connection) fails the
 * run, as does any deadlock PostgreSQL broke in the database
 * (`pg_stat_database.deadlocks`) or any broken invariant. Writes the
 * "Concurrent write storm" section of docs/PERFORMANCE.md, and exits 1 on
 * a failure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiClient, GAVE_UP_STATUS, type HttpResult, type SendOptions } from './http.js';
import { machineInfo } from './machine.js';
import { createScratchDatabase, databaseUrl, dropScratchDatabase } from './raw-sql.js';
import { createUser, startServer, type RunningServer } from './server.js';
import { percentile } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVER_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = `cardwork_bench_storm_${process.pid}_${Date.now().toString(36)}`;
const DB_URL = databaseUrl(SERVER_URL, DB);
const WORKERS = Number(process.env.BENCH_STORM_WORKERS ?? 24);
const SECONDS = Number(process.env.BENCH_STORM_SECONDS ?? 60);
const CARDS = Number(process.env.BENCH_STORM_CARDS ?? 300);
const KEEP_DB = process.env.BENCH_KEEP_DB === '1';
/**
 * Share of writes (percent) whose client gives up after 1 to 40 ms and
 * closes its connection: the server then cancels their statements mid-way
 * (docs/RELIABILITY.md, "A request whose client left stops its work"), at
 * whatever point each had reached.
 */
const GIVE_UP_PERCENT = Number(process.env.BENCH_STORM_GIVE_UP_PERCENT ?? 10);
/** The server's PostgreSQL log, searched for the deadlocks' own lines (readable by root or the adm group). */
const PG_LOG = process.env.BENCH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const DOC = process.env.BENCH_DOC ?? path.join(ROOT, 'docs/PERFORMANCE.md');
const BEGIN = '<!-- bench:storm:begin (written by `npm run bench:storm`; edits inside are overwritten) -->';
const END = '<!-- bench:storm:end -->';
/** What a write may answer while others race it: done, or refused because of what the others did. */
const EXPECTED = new Set([200, 201, 400, 404, 409, GAVE_UP_STATUS]);

const log = (msg: string) => process.stderr.write(`[bench:storm] ${msg}\n`);
const rnd = (n: number) => Math.floor(Math.random() * n);
const pick = <T>(list: readonly T[]): T => list[rnd(list.length)];
const chance = (p: number) => Math.random() < p;

interface GroupRow {
  id: number;
  type_id: number;
  card_id: number;
}

/** What the project holds, read from the database once a second while the storm runs, so picks name live rows. */
interface World {
  root: number;
  live: number[];
  /** Cards with children: their moves, archivings and deletions take subtrees. */
  branches: number[];
  groups: GroupRow[];
  types: Array<{ id: number; name: string }>;
  scratchFields: number[];
  models: number[];
}

interface Setup {
  projectId: number;
  orgId: number;
  root: number;
  apiKey: string;
  users: number[];
  /** Field ids by name. */
  fields: Record<string, number>;
  models: number[];
  /** Group types and groups made by the setup: never deleted by the storm (renamed and moved, yes). */
  lastingTypes: Set<number>;
  lastingGroups: Set<number>;
}

/** Tally of one kind of write. */
interface Tally {
  statuses: Map<number, number>;
  /** Refusals by status and problem type (`409 CARD.CYCLE_DETECTED`). */
  refusals: Map<string, number>;
  latencies: number[];
}

interface Failure {
  kind: string;
  request: string;
  status: number;
  body: string;
}

interface Check {
  name: string;
  /** Rows that break the invariant (each row one offender). */
  sql: string;
  /** Rows the check looked at, for the report. */
  over: string;
}

interface CheckResult {
  check: Check;
  checked: number;
  violations: number;
  sample: unknown[];
}

/**
 * The invariants, database-wide (the scratch database holds one project).
 * Table and column names as migrations/ define them; docs/card-tree.md and
 * the grouping migration say which rows each must hold.
 */
const CHECKS: Check[] = [
  {
    // Clients that gave up had their statements cancelled mid-transaction: each transaction still ended.
    name: 'no connection left inside a transaction (clients that gave up included)',
    over: `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()`,
    sql: `SELECT pid, state, left(query, 120) AS query FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
  },
  {
    name: 'one top-level card per project (parent NULL, ref 0, depth 0, the project row names it)',
    over: `SELECT count(*) FROM workspace.projects`,
    sql: `SELECT p.id, count(c.id) AS top_level_cards, bool_and(c.ref = 0 AND c.depth = 0 AND c.id = p.top_level_card_id) AS ok
            FROM workspace.projects p LEFT JOIN cards.cards c ON c.project_id = p.id AND c.parent_id IS NULL
           GROUP BY p.id HAVING count(c.id) <> 1 OR NOT bool_and(c.ref = 0 AND c.depth = 0 AND c.id = p.top_level_card_id)`,
  },
  {
    name: 'dense child positions per parent (0 … n−1)',
    over: `SELECT count(DISTINCT parent_id) FROM cards.cards WHERE parent_id IS NOT NULL`,
    sql: `SELECT parent_id, count(*) AS children, min(position), max(position), count(DISTINCT position) AS distinct_positions
            FROM cards.cards WHERE parent_id IS NOT NULL GROUP BY parent_id
          HAVING min(position) <> 0 OR max(position) <> count(*) - 1 OR count(DISTINCT position) <> count(*)`,
  },
  {
    name: 'ancestor_ids = the parent chain (parent path || parent), depth = parent depth + 1 = cardinality',
    over: `SELECT count(*) FROM cards.cards WHERE parent_id IS NOT NULL`,
    sql: `SELECT c.id, c.parent_id, c.ancestor_ids, c.depth, p.ancestor_ids AS parent_ancestors, p.depth AS parent_depth
            FROM cards.cards c JOIN cards.cards p ON p.id = c.parent_id
           WHERE c.ancestor_ids <> p.ancestor_ids || p.id OR c.depth <> p.depth + 1 OR c.depth <> cardinality(c.ancestor_ids)`,
  },
  {
    name: 'a card is in its parent’s project and team',
    over: `SELECT count(*) FROM cards.cards WHERE parent_id IS NOT NULL`,
    sql: `SELECT c.id, c.project_id, p.project_id AS parent_project, c.organization_id, p.organization_id AS parent_organization
            FROM cards.cards c JOIN cards.cards p ON p.id = c.parent_id
           WHERE c.project_id <> p.project_id OR c.organization_id <> p.organization_id`,
  },
  {
    name: 'hidden = is_archived or parent hidden (top-level card neither)',
    over: `SELECT count(*) FROM cards.cards`,
    sql: `SELECT c.id, c.is_archived, c.hidden, p.hidden AS parent_hidden
            FROM cards.cards c LEFT JOIN cards.cards p ON p.id = c.parent_id
           WHERE c.hidden IS DISTINCT FROM (c.is_archived OR coalesce(p.hidden, false))
              OR (c.parent_id IS NULL AND (c.hidden OR c.is_archived))`,
  },
  {
    name: 'project counters: card_count = cards below the top level, visible_count = those not hidden',
    over: `SELECT count(*) FROM cards.project_counters`,
    sql: `SELECT k.project_id, k.card_count, count(c.id) AS cards, k.visible_count, count(c.id) FILTER (WHERE NOT c.hidden) AS visible
            FROM cards.project_counters k LEFT JOIN cards.cards c ON c.project_id = k.project_id AND c.depth > 0
           GROUP BY k.project_id, k.card_count, k.visible_count
          HAVING k.card_count <> count(c.id) OR k.visible_count <> count(c.id) FILTER (WHERE NOT c.hidden)`,
  },
  {
    name: 'a counter row per project',
    over: `SELECT count(*) FROM workspace.projects`,
    sql: `SELECT p.id FROM workspace.projects p LEFT JOIN cards.project_counters k ON k.project_id = p.id WHERE k.project_id IS NULL`,
  },
  {
    name: 'refs: 1 … next_ref − 1 below the top level, unique per project',
    over: `SELECT count(*) FROM cards.cards`,
    sql: `SELECT c.id, c.ref, k.next_ref FROM cards.cards c JOIN cards.project_counters k ON k.project_id = c.project_id
           WHERE c.ref >= k.next_ref OR (c.depth > 0 AND c.ref < 1)
          UNION ALL
          SELECT min(id), ref, NULL FROM cards.cards GROUP BY project_id, ref HAVING count(*) > 1`,
  },
  {
    name: 'dense group positions per (type, scope card)',
    over: `SELECT count(*) FROM (SELECT DISTINCT type_id, card_id FROM grouping.groups) s`,
    sql: `SELECT type_id, card_id, count(*) AS groups, min(position), max(position)
            FROM grouping.groups GROUP BY type_id, card_id
          HAVING min(position) <> 0 OR max(position) <> count(*) - 1 OR count(DISTINCT position) <> count(*)`,
  },
  {
    name: 'a group is in its type’s project, and its scope card too',
    over: `SELECT count(*) FROM grouping.groups`,
    sql: `SELECT g.id, g.project_id, t.project_id AS type_project, c.project_id AS scope_project
            FROM grouping.groups g JOIN grouping.group_types t ON t.id = g.type_id JOIN cards.cards c ON c.id = g.card_id
           WHERE g.project_id <> t.project_id OR g.project_id <> c.project_id OR g.organization_id <> c.organization_id`,
  },
  {
    name: 'dense membership positions per group (0 … n−1)',
    over: `SELECT count(DISTINCT group_id) FROM grouping.memberships`,
    sql: `SELECT group_id, count(*) AS members, min(position), max(position)
            FROM grouping.memberships GROUP BY group_id
          HAVING min(position) <> 0 OR max(position) <> count(*) - 1 OR count(DISTINCT position) <> count(*)`,
  },
  {
    name: 'a membership’s type_id is its group’s',
    over: `SELECT count(*) FROM grouping.memberships`,
    sql: `SELECT m.card_id, m.group_id, m.type_id, g.type_id AS group_type
            FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id WHERE m.type_id <> g.type_id`,
  },
  {
    name: 'one group per card in a one_group_per_card type (columns)',
    over: `SELECT count(DISTINCT card_id) FROM grouping.memberships m JOIN grouping.group_types t ON t.id = m.type_id AND t.one_group_per_card`,
    sql: `SELECT m.card_id, m.type_id, count(*) AS groups
            FROM grouping.memberships m JOIN grouping.group_types t ON t.id = m.type_id
           WHERE t.one_group_per_card GROUP BY m.card_id, m.type_id HAVING count(*) > 1`,
  },
  {
    name: 'memberships only in scope (the group’s scope card is a strict ancestor of the card)',
    over: `SELECT count(*) FROM grouping.memberships`,
    sql: `SELECT m.card_id, m.group_id, g.card_id AS scope_card, c.ancestor_ids
            FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id JOIN cards.cards c ON c.id = m.card_id
           WHERE NOT (g.card_id = ANY (c.ancestor_ids))`,
  },
  {
    name: 'group type ↔ its group_type field: exactly one each way, same project',
    over: `SELECT count(*) FROM grouping.group_types`,
    sql: `SELECT t.id AS type_id, count(a.id) AS fields FROM grouping.group_types t
            LEFT JOIN fields.attributes a ON a.group_type_id = t.id AND a.type = 'group_type' AND a.project_id = t.project_id AND a.model_id IS NULL
           GROUP BY t.id HAVING count(a.id) <> 1
          UNION ALL
          SELECT a.group_type_id, NULL FROM fields.attributes a LEFT JOIN grouping.group_types t ON t.id = a.group_type_id
           WHERE a.type = 'group_type' AND t.id IS NULL`,
  },
  {
    name: 'values only of fields of the card’s project (scalar, members, relationships, likes, files)',
    over: `SELECT (SELECT count(*) FROM fields.scalar_values) + (SELECT count(*) FROM fields.member_values)
                + (SELECT count(*) FROM fields.relationship_values) + (SELECT count(*) FROM fields.like_votes) + (SELECT count(*) FROM fields.files)`,
    sql: `SELECT v.kind, v.card_id, v.attribute_id FROM (
            SELECT 'scalar' AS kind, card_id, attribute_id FROM fields.scalar_values
            UNION ALL SELECT 'members', card_id, attribute_id FROM fields.member_values
            UNION ALL SELECT 'relationships', card_id, attribute_id FROM fields.relationship_values
            UNION ALL SELECT 'likes', card_id, attribute_id FROM fields.like_votes
            UNION ALL SELECT 'files', card_id, attribute_id FROM fields.files) v
            JOIN cards.cards c ON c.id = v.card_id JOIN fields.attributes a ON a.id = v.attribute_id
           WHERE a.project_id <> c.project_id`,
  },
  {
    name: 'list values: distinct positions per (card, field) (members, relationships, files)',
    over: `SELECT count(*) FROM (SELECT DISTINCT card_id, attribute_id FROM fields.member_values
                                  UNION SELECT DISTINCT card_id, attribute_id FROM fields.relationship_values
                                  UNION SELECT DISTINCT card_id, attribute_id FROM fields.files) s`,
    sql: `SELECT kind, card_id, attribute_id, count(*) AS entries, count(DISTINCT position) AS positions FROM (
            SELECT 'members' AS kind, card_id, attribute_id, position FROM fields.member_values
            UNION ALL SELECT 'relationships', card_id, attribute_id, position FROM fields.relationship_values
            UNION ALL SELECT 'files', card_id, attribute_id, position FROM fields.files) v
           GROUP BY kind, card_id, attribute_id HAVING count(DISTINCT position) <> count(*)`,
  },
  {
    name: 'relationship values name cards of the same team',
    over: `SELECT count(*) FROM fields.relationship_values`,
    sql: `SELECT r.card_id, r.target_card_id FROM fields.relationship_values r
            JOIN cards.cards c ON c.id = r.card_id JOIN cards.cards t ON t.id = r.target_card_id
           WHERE c.organization_id <> t.organization_id`,
  },
  {
    name: 'no stored file both live and released',
    over: `SELECT count(*) FROM fields.files`,
    sql: `SELECT f.id, f.storage_key FROM fields.files f JOIN fields.released_blobs r ON r.storage_key = f.storage_key`,
  },
];

/** One writer's kind: its name, how often it is picked against the others, and one write of it (null: nothing to do now). */
type Operation = [name: string, weight: number, run: (ctx: StormContext) => Promise<HttpResult | null>];

/** One writer's view: the shared client and project, and the request it sent last (for the report of a failure). */
interface StormContext {
  readonly setup: Setup;
  readonly world: World;
  send(method: string, urlPath: string, body?: unknown): Promise<HttpResult>;
  upload(urlPath: string): Promise<HttpResult>;
  last: string;
}

function somewhere(w: World): number {
  return chance(0.25) || !w.live.length ? w.root : pick(w.live);
}

function someCard(w: World): number {
  return w.live.length ? pick(w.live) : w.root;
}

/** A value for one of the setup's fields, by name, or undefined for names it does not fill. */
function valueFor(name: string, s: Setup, w: World): unknown {
  switch (name) {
    case 'Estimate':
      return chance(0.1) ? null : rnd(100);
    case 'Notes':
      return `note ${rnd(1e6)}`;
    case 'Due':
      return `2026-${String(1 + rnd(12)).padStart(2, '0')}-${String(1 + rnd(28)).padStart(2, '0')}`;
    case 'Done':
      return chance(0.5);
    case 'Owners':
      return Array.from({ length: rnd(3) }, () => pick(s.users));
    case 'Links':
      return Array.from({ length: rnd(4) }, () => someCard(w));
    case 'Severity':
      return rnd(5);
    default:
      return undefined;
  }
}

const VALUE_FIELDS = ['Estimate', 'Notes', 'Due', 'Done', 'Owners', 'Links', 'Severity'];

function someValues(s: Setup, w: World): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Severity is a field of the Bug model: refused (400) on a card of another model, so rarely sent.
  for (const name of VALUE_FIELDS) if (chance(name === 'Severity' ? 0.05 : 0.4)) out[name] = valueFor(name, s, w);
  if (!Object.keys(out).length) out.Estimate = rnd(100);
  return out;
}

/** One small file in the part "value" of a multipart body (a files field's append). */
function uploadFile(api: ApiClient, urlPath: string, options: SendOptions = {}): Promise<HttpResult> {
  const boundary = `----storm${rnd(1e9)}`;
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="value"; filename="f${rnd(1e6)}.txt"\r\n` +
      `Content-Type: text/plain\r\n\r\nstorm file ${rnd(1e9)}\n\r\n--${boundary}--\r\n`,
  );
  return api.send('POST', urlPath, body, `multipart/form-data; boundary=${boundary}`, options);
}

function operations(): Operation[] {
  const post = (c: StormContext, p: string, body?: unknown) => c.send('POST', p, body);
  const relocate = (c: StormContext, card: number, body: Record<string, unknown>) => post(c, `/cards/${card}/relocate`, body);
  const groups = (c: StormContext) => c.world.groups;
  // Most picks a group scoped at the top-level card: one scoped at a random card is out of most cards' scope (400).
  const someGroup = (c: StormContext) => {
    const wide = c.world.groups.filter((g) => g.card_id === c.world.root);
    return chance(0.6) && wide.length ? pick(wide) : pick(c.world.groups);
  };
  return [
    ['card create (with a group and values at times)', 10, (c) => {
      const body: Record<string, unknown> = { title: `storm ${rnd(1e6)}` };
      if (chance(0.4) && groups(c).length) body.group_id = someGroup(c).id;
      if (chance(0.4)) body.attributes = someValues(c.setup, c.world);
      return post(c, `/cards/${somewhere(c.world)}/children`, body);
    }],
    ['card move', 5, (c) => relocate(c, someCard(c.world), { parent_id: somewhere(c.world), position: rnd(5) })],
    ['subtree move', 3, (c) =>
      relocate(c, c.world.branches.length ? pick(c.world.branches) : someCard(c.world), { parent_id: somewhere(c.world), position: rnd(5) })],
    ['card reorder', 4, (c) => relocate(c, someCard(c.world), { position: rnd(6) })],
    ['card move into a group (relocate with group_id)', 3, (c) => {
      if (!groups(c).length) return relocate(c, someCard(c.world), { position: 0 });
      const body: Record<string, unknown> = { group_id: someGroup(c).id, position: rnd(3) };
      if (chance(0.5)) body.parent_id = somewhere(c.world);
      return relocate(c, someCard(c.world), body);
    }],
    ['card archive / restore', 3, (c) => {
      const card = chance(0.3) && c.world.branches.length ? pick(c.world.branches) : someCard(c.world);
      return chance(0.5) ? post(c, `/cards/${card}/archive`) : c.send('DELETE', `/cards/${card}/archive`);
    }],
    ['card delete', 2, async (c) => {
      // Below 70 % of the setup's cards none is deleted (another kind is picked) until creations make up for it.
      if (c.world.live.length < CARDS * 0.7) return null;
      const card = pick(c.world.live);
      const res = await c.send('DELETE', `/cards/${card}`);
      if (res.status === 200) c.world.live.splice(c.world.live.indexOf(card), 1);
      return res;
    }],
    ['card title / state', 2, (c) =>
      chance(0.5)
        ? c.send('PUT', `/cards/${someCard(c.world)}`, { title: `renamed ${rnd(1e6)}` })
        : post(c, `/cards/${someCard(c.world)}/state`, { state: pick(['undecided', 'accepted', 'in_progress', 'waiting', 'completed', 'closed']) })],
    ['values set (several fields)', 5, (c) => post(c, `/cards/${someCard(c.world)}/attributes`, { attributes: someValues(c.setup, c.world) })],
    ['value set (one field, likes vote among them)', 3, (c) => {
      const name = pick([...VALUE_FIELDS, 'Likes']);
      const value = name === 'Likes' ? pick([-1, 0, 1]) : valueFor(name, c.setup, c.world);
      return post(c, `/cards/${someCard(c.world)}/attributes/${c.setup.fields[name]}`, { value });
    }],
    ['relationships set / append / pop', 4, (c) => {
      const card = someCard(c.world);
      const links = c.setup.fields.Links;
      const roll = Math.random();
      if (roll < 0.35) return post(c, `/cards/${card}/attributes/${links}`, { value: [someCard(c.world), someCard(c.world)] });
      if (roll < 0.7) return post(c, `/cards/${card}/attributes/${links}/append`, { value: someCard(c.world) });
      if (roll < 0.85) return post(c, `/cards/${card}/attributes/${links}/pop`, { value: someCard(c.world) });
      return post(c, `/cards/${card}/attributes/${links}/pop`);
    }],
    ['members append / pop', 2, (c) => {
      const owners = c.setup.fields.Owners;
      const card = someCard(c.world);
      return chance(0.6)
        ? post(c, `/cards/${card}/attributes/${owners}/append`, { value: pick(c.setup.users) })
        : post(c, `/cards/${card}/attributes/${owners}/pop`, chance(0.5) ? { value: pick(c.setup.users) } : undefined);
    }],
    ['files append (multipart) / pop', 2, (c) => {
      const files = c.setup.fields.Attachments;
      const card = someCard(c.world);
      return chance(0.6)
        ? c.upload(`/cards/${card}/attributes/${files}/append`)
        : post(c, `/cards/${card}/attributes/${files}/pop`);
    }],
    ['model change', 3, (c) =>
      post(c, `/cards/${someCard(c.world)}/model`, { model_id: chance(0.8) && c.world.models.length ? pick(c.world.models) : null })],
    ['membership add / remove / remove from type', 5, (c) => {
      if (!groups(c).length) return post(c, `/cards/${someCard(c.world)}/comments`, { content: 'no group left' });
      const card = someCard(c.world);
      const group = someGroup(c);
      const roll = Math.random();
      if (roll < 0.5) return post(c, `/cards/${card}/add-to-group`, { group_id: group.id, position: rnd(3) });
      if (roll < 0.8) return post(c, `/cards/${card}/remove-from-group`, { group_id: group.id });
      return post(c, `/cards/${card}/remove-from-group-type`, { type_id: group.type_id });
    }],
    ['group create', 2, (c) => {
      const type = pick(c.world.types.length ? c.world.types : [{ id: pick([...c.setup.lastingTypes]), name: '' }]);
      return post(c, `/cards/${somewhere(c.world)}/groups`, { type_id: type.id, title: `P${rnd(1e6)}`, position: rnd(3) });
    }],
    ['group rename and move', 3, (c) =>
      groups(c).length
        ? c.send('PUT', `/groups/${pick(groups(c)).id}`, { title: `G${rnd(1e6)}`, position: rnd(3) })
        : post(c, `/cards/${somewhere(c.world)}/groups`, { type_id: pick([...c.setup.lastingTypes]), title: `P${rnd(1e6)}` })],
    ['group delete', 1.5, (c) => {
      const passing = groups(c).filter((g) => !c.setup.lastingGroups.has(g.id));
      if (!passing.length) return post(c, `/cards/${somewhere(c.world)}/groups`, { type_id: pick([...c.setup.lastingTypes]), title: `P${rnd(1e6)}` });
      return c.send('DELETE', `/groups/${pick(passing).id}`);
    }],
    ['group type create / update / delete', 1.5, (c) => {
      const passing = c.world.types.filter((t) => !c.setup.lastingTypes.has(t.id));
      const roll = Math.random();
      if (roll < 0.35 && passing.length) return c.send('DELETE', `/group-types/${pick(passing).id}`);
      if (roll < 0.55 && passing.length) {
        const body = chance(0.5) ? { name: `T${rnd(1e6)}` } : { one_group_per_card: chance(0.5) };
        return c.send('PUT', `/group-types/${pick(passing).id}`, body);
      }
      if (passing.length >= 8) return c.send('DELETE', `/group-types/${pick(passing).id}`);
      return post(c, `/projects/${c.setup.projectId}/group-types`, { name: `T${rnd(1e6)}`, one_group_per_card: chance(0.5) });
    }],
    ['field create / rename / delete', 1, (c) => {
      const scratch = c.world.scratchFields;
      const roll = Math.random();
      if (roll < 0.3 && scratch.length) return c.send('DELETE', `/attributes/${pick(scratch)}`);
      if (roll < 0.5 && scratch.length) return c.send('PUT', `/attributes/${pick(scratch)}`, { name: `Scratch ${rnd(1e6)}` });
      if (scratch.length >= 8) return c.send('DELETE', `/attributes/${pick(scratch)}`);
      return post(c, `/projects/${c.setup.projectId}/attributes`, { name: `Scratch ${rnd(1e6)}`, type: pick(['text', 'number', 'relationships', 'members']) });
    }],
    ['comment', 3, (c) => post(c, `/cards/${someCard(c.world)}/comments`, { content: `storm comment ${rnd(1e6)}` })],
  ];
}

/** The project as it is now, for the writers' picks. */
async function readWorld(db: pg.Client, s: Setup): Promise<World> {
  const ids = (sql: string) => db.query<{ id: string }>(sql, [s.projectId]).then((r) => r.rows.map((x) => Number(x.id)));
  const live = await ids(`SELECT id FROM cards.cards WHERE project_id = $1 AND depth > 0`);
  const branches = await ids(
    `SELECT DISTINCT parent_id AS id FROM cards.cards WHERE project_id = $1 AND depth > 1`,
  );
  const groups = (
    await db.query<{ id: string; type_id: string; card_id: string }>(`SELECT id, type_id, card_id FROM grouping.groups WHERE project_id = $1`, [s.projectId])
  ).rows.map((g) => ({ id: Number(g.id), type_id: Number(g.type_id), card_id: Number(g.card_id) }));
  const types = (await db.query<{ id: string; name: string }>(`SELECT id, name FROM grouping.group_types WHERE project_id = $1`, [s.projectId])).rows.map(
    (t) => ({ id: Number(t.id), name: t.name }),
  );
  const scratchFields = await ids(`SELECT id FROM fields.attributes WHERE project_id = $1 AND name LIKE 'Scratch %'`);
  const models = await ids(`SELECT id FROM fields.models WHERE project_id = $1`);
  return { root: s.root, live, branches, groups, types, scratchFields, models };
}

/** Team, project, fields, models, group types and groups, then CARDS cards in a random tree (through the API). */
async function createProject(server: RunningServer): Promise<Setup> {
  const owner = createUser(ROOT, DB_URL, 'storm');
  const others = ['storm_ann', 'storm_bob', 'storm_cy'].map((name) => createUser(ROOT, DB_URL, name));
  const api = new ApiClient(server.port, owner.api_key, 8);
  try {
    const org = await api.json<{ id: number }>('POST', '/organizations', { name: 'Storm' });
    for (const u of others) await api.json('POST', `/organizations/${org.id}/members`, { user: u.id });
    const project = await api.json<{ id: number; top_level_card_id: number }>('POST', `/organizations/${org.id}/projects`, { title: 'Storm' });
    const root = project.top_level_card_id;
    const fields: Record<string, number> = {};
    const types: Array<[string, string]> = [
      ['Estimate', 'number'], ['Notes', 'text'], ['Due', 'date'], ['Done', 'bool'],
      ['Owners', 'members'], ['Links', 'relationships'], ['Likes', 'likes'], ['Attachments', 'files'],
    ];
    for (const [name, type] of types) fields[name] = (await api.json<{ id: number }>('POST', `/projects/${project.id}/attributes`, { name, type })).id;
    const models: number[] = [];
    for (const name of ['Bug', 'Task']) models.push((await api.json<{ id: number }>('POST', `/projects/${project.id}/models`, { name })).id);
    fields.Severity = (await api.json<{ id: number }>('POST', `/models/${models[0]}/attributes`, { name: 'Severity', type: 'number' })).id;

    const lastingTypes = new Set<number>();
    const lastingGroups = new Set<number>();
    const groupType = async (name: string, one: boolean) => {
      const t = await api.json<{ id: number }>('POST', `/projects/${project.id}/group-types`, { name, one_group_per_card: one });
      lastingTypes.add(t.id);
      return t.id;
    };
    const group = async (card: number, type: number, title: string) => {
      const g = await api.json<{ id: number }>('POST', `/cards/${card}/groups`, { type_id: type, title });
      lastingGroups.add(g.id);
      return g.id;
    };
    const status = await groupType('Status', true);
    const labels = await groupType('Labels', false);
    const columns: number[] = [];
    for (const title of ['To do', 'Doing', 'Done', 'Blocked']) columns.push(await group(root, status, title));
    const tags: number[] = [];
    for (const title of ['red', 'green', 'blue', 'urgent', 'later']) tags.push(await group(root, labels, title));

    // The tree: a dozen lanes under the top-level card, then cards under random earlier ones (up to depth 4),
    // eight creations at a time; some with values, a column and labels.
    const users = [owner.id, ...others.map((u) => u.id)];
    const created: Array<{ id: number; depth: number }> = [];
    let next = 0;
    const creator = async () => {
      while (next < CARDS) {
        const i = next++;
        const candidates = created.filter((x) => x.depth < 4);
        const parent = i < 12 || !candidates.length ? { id: root, depth: 0 } : pick(candidates);
        const body: Record<string, unknown> = { title: `card ${i}` };
        if (parent.depth > 0 && chance(0.5)) body.group_id = pick(columns);
        if (parent.depth > 0 && chance(0.5)) {
          body.attributes = { Estimate: rnd(100), Notes: `setup ${i}`, Owners: [pick(users)], Links: created.length ? [pick(created).id] : [] };
        }
        const card = await api.json<{ id: number }>('POST', `/cards/${parent.id}/children`, body);
        created.push({ id: card.id, depth: parent.depth + 1 });
        if (parent.depth > 0 && chance(0.3)) await api.json('POST', `/cards/${card.id}/add-to-group`, { group_id: pick(tags) });
      }
    };
    await Promise.all(Array.from({ length: 8 }, creator));
    // Groups scoped at four lanes: leaving a lane takes a card out of them.
    for (const lane of created.filter((x) => x.depth === 1).slice(0, 4)) {
      await group(lane.id, status, `lane ${lane.id} column`);
      await group(lane.id, labels, `lane ${lane.id} label`);
    }
    return { projectId: project.id, orgId: org.id, root, apiKey: owner.api_key, users, fields, models, lastingTypes, lastingGroups };
  } finally {
    api.close();
  }
}

async function deadlockCount(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ deadlocks: string }>(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`);
  return Number(rows[0]?.deadlocks ?? 0);
}

interface ServerLog {
  readable: boolean;
  /** Each 'deadlock detected' error with its DETAIL (the waits of the cycle), CONTEXT and STATEMENT lines. */
  deadlocks: string[][];
  /** The other errors, by message with its numbers blanked: 'could not obtain lock on row …' is a NOWAIT (55P03) the unit of work runs again after. */
  errors: Map<string, number>;
}

/**
 * The PostgreSQL log's errors since `since` on the scratch database (other
 * work on the server writes there too): by the database its lines name, or,
 * under a prefix without it, by the storm's backends (`pids`).
 */
function serverLog(since: Date, pids: Set<number>): ServerLog {
  let text: string;
  try {
    text = fs.readFileSync(PG_LOG, 'utf8');
  } catch {
    return { readable: false, deadlocks: [], errors: new Map() };
  }
  // log_line_prefix '%m [%p] %q%u@%d ': time, pid, then user@database on a session's lines.
  const stamp = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[(\d+)\] (?:\S*@(\S*) )?(\w+):\s*(.*)$/;
  const ours = (m: RegExpExecArray) => (m[3] !== undefined ? m[3] === DB : pids.has(Number(m[2])));
  const lines = text.split('\n');
  const out: ServerLog = { readable: true, deadlocks: [], errors: new Map() };
  for (let i = 0; i < lines.length; i++) {
    const m = stamp.exec(lines[i]);
    if (!m || m[4] !== 'ERROR' || !ours(m) || new Date(`${m[1].replace(' ', 'T')}Z`) < since) continue;
    if (!/deadlock detected/.test(m[5])) {
      const key = m[5].replace(/\d+/g, 'N');
      out.errors.set(key, (out.errors.get(key) ?? 0) + 1);
      continue;
    }
    // Its own further lines: same pid, DETAIL/HINT/CONTEXT/STATEMENT, each with its tab-indented continuation lines.
    const entry = [lines[i]];
    let mine = true;
    for (let j = i + 1; j < lines.length && j < i + 200; j++) {
      const n = stamp.exec(lines[j]);
      if (!n) {
        if (mine && /^\s/.test(lines[j])) entry.push(lines[j]);
        continue;
      }
      mine = n[2] === m[2];
      if (!mine) continue;
      if (!/^(DETAIL|HINT|CONTEXT|STATEMENT)$/.test(n[4])) break;
      entry.push(lines[j]);
    }
    out.deadlocks.push(entry);
  }
  return out;
}

async function runChecks(db: pg.Client): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const check of CHECKS) {
    const checked = Number(Object.values((await db.query(check.over)).rows[0] as Record<string, unknown>)[0]);
    const { rows } = await db.query(check.sql);
    out.push({ check, checked, violations: rows.length, sample: rows.slice(0, 5) });
  }
  return out;
}

interface StormResult {
  /** The server's backends on the scratch database (pids), seen once a second: whose lines in the PostgreSQL log are the storm's. */
  backends: Set<number>;
  tallies: Map<string, Tally>;
  failures: Failure[];
  networkErrors: number;
  seconds: number;
}

/** Whether this write's client gives up, and when. */
function giveUp(): SendOptions {
  return Math.random() * 100 < GIVE_UP_PERCENT ? { giveUpAfterMs: 1 + rnd(40) } : {};
}

async function storm(server: RunningServer, setup: Setup, db: pg.Client): Promise<StormResult> {
  const ops = operations();
  const weights = ops.reduce((n, [, w]) => n + w, 0);
  const choose = (): Operation => {
    let r = Math.random() * weights;
    for (const op of ops) if ((r -= op[1]) < 0) return op;
    return ops[ops.length - 1];
  };
  const api = new ApiClient(server.port, setup.apiKey, WORKERS);
  const shared = { world: await readWorld(db, setup) };
  const context = (): StormContext => ({
    setup,
    get world() {
      return shared.world;
    },
    last: '',
    send(method, urlPath, body) {
      this.last = `${method} ${urlPath}${body === undefined ? '' : ` ${JSON.stringify(body)}`}`;
      return api.request(method, urlPath, body, giveUp());
    },
    upload(urlPath) {
      this.last = `POST ${urlPath} (multipart)`;
      return uploadFile(api, urlPath, giveUp());
    },
  });
  const tallies = new Map<string, Tally>(ops.map(([name]) => [name, { statuses: new Map(), refusals: new Map(), latencies: [] }]));
  const failures: Failure[] = [];
  let networkErrors = 0;
  const started = performance.now();
  const stopAt = started + SECONDS * 1000;
  let running = true;
  const backends = new Set<number>();
  const refresher = (async () => {
    while (running) {
      const { rows } = await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      for (const row of rows) backends.add(row.pid);
      await new Promise((r) => setTimeout(r, 1000));
      shared.world = await readWorld(db, setup);
    }
  })();
  let lastReport = started;
  const writer = async () => {
    const ctx = context();
    while (performance.now() < stopAt) {
      const [name, , run] = choose();
      const tally = tallies.get(name)!;
      const t0 = performance.now();
      let res: HttpResult | null;
      try {
        res = await run(ctx);
      } catch (error) {
        networkErrors++;
        res = { status: 0, headers: {}, body: String(error) };
      }
      if (res === null) continue;
      tally.latencies.push(performance.now() - t0);
      tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 300 && res.status !== GAVE_UP_STATUS) {
        const key = `${res.status} ${problemType(res.body)}`;
        tally.refusals.set(key, (tally.refusals.get(key) ?? 0) + 1);
      }
      if (!EXPECTED.has(res.status) && failures.length < 50) failures.push({ kind: name, request: ctx.last, status: res.status, body: res.body.slice(0, 400) });
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        const total = [...tallies.values()].reduce((n, t) => n + t.latencies.length, 0);
        log(`${((lastReport - started) / 1000).toFixed(0)} s: ${total} writes, ${shared.world.live.length} cards`);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, writer));
  const seconds = (performance.now() - started) / 1000;
  running = false;
  await refresher;
  api.close();
  return { backends, tallies, failures, networkErrors, seconds };
}

function problemType(body: string): string {
  try {
    const parsed = JSON.parse(body) as { type?: unknown };
    return typeof parsed.type === 'string' ? parsed.type : '?';
  } catch {
    return '?';
  }
}

function statusCount(t: Tally, pred: (s: number) => boolean): number {
  return [...t.statuses].filter(([s]) => pred(s)).reduce((n, [, c]) => n + c, 0);
}

interface Report {
  result: StormResult;
  checks: CheckResult[];
  deadlocks: number;
  pgLog: ServerLog;
  sizes: Record<string, number>;
  setupSeconds: number;
  machine: ReturnType<typeof machineInfo>;
  loadAtEnd: number;
}

function block(r: Report): string {
  const { result } = r;
  const all = [...result.tallies.values()];
  const total = all.reduce((n, t) => n + t.latencies.length, 0);
  const fiveHundreds = all.reduce((n, t) => n + statusCount(t, (s) => s >= 500), 0);
  const unexpected = all.reduce((n, t) => n + statusCount(t, (s) => !EXPECTED.has(s) && s < 500), 0);
  const broken = r.checks.filter((c) => c.violations > 0);
  const ok = fiveHundreds === 0 && r.deadlocks === 0 && broken.length === 0 && result.networkErrors === 0;
  const m = r.machine;
  const lines = [
    BEGIN,
    '',
    `Run of ${m.date.slice(0, 16).replace('T', ' ')} UTC, commit ${m.commit}: ${WORKERS} writers for ${SECONDS} s over one project ` +
      `(setup ${CARDS} cards, ${r.setupSeconds.toFixed(0)} s). ${m.cpus} × ${m.cpuModel}, ${m.postgres.split(' on ')[0]} on the same machine; ` +
      `load average (1 min) ${m.loadAtStart.toFixed(2)} at start, ${r.loadAtEnd.toFixed(2)} at the end.`,
    '',
    `**${ok ? 'Passed' : 'FAILED'}**: ${total} writes in ${result.seconds.toFixed(1)} s (${(total / result.seconds).toFixed(0)} per s); ` +
      `clients gave up on ${all.reduce((n, t) => n + statusCount(t, (s) => s === GAVE_UP_STATUS), 0)} (BENCH_STORM_GIVE_UP_PERCENT ${GIVE_UP_PERCENT} %, after 1–40 ms); ` +
      `5xx: ${fiveHundreds}; dropped connections: ${result.networkErrors}; other unexpected statuses: ${unexpected}; ` +
      `deadlocks (\`pg_stat_database.deadlocks\`): ${r.deadlocks}` +
      (r.pgLog.readable ? `, 'deadlock detected' in the PostgreSQL log: ${r.pgLog.deadlocks.length}` : ', PostgreSQL log not readable') +
      `; invariants broken: ${broken.length} of ${r.checks.length}.`,
    '',
    '| write kind | sent | 2xx | 400 | 404 | 409 | gave up | 5xx | other | median ms | p95 ms | most frequent refusals |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const [name, t] of result.tallies) {
    const sorted = [...t.latencies].sort((a, b) => a - b);
    const c = (s: number) => statusCount(t, (x) => x === s);
    lines.push(
      `| ${name} | ${t.latencies.length} | ${statusCount(t, (s) => s >= 200 && s < 300)} | ${c(400)} | ${c(404)} | ${c(409)} | ${c(GAVE_UP_STATUS)} | ` +
        `${statusCount(t, (s) => s >= 500)} | ${statusCount(t, (s) => (s < 200 || s >= 300) && !EXPECTED.has(s) && s < 500)} | ` +
        `${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 95).toFixed(1)} | ` +
        [...t.refusals]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 3)
          .map(([k, n]) => `${k} × ${n}`)
          .join(', ') +
        ' |',
    );
  }
  lines.push('', '| invariant (SQL over the whole scratch database) | rows checked | violations | |', '|---|---:|---:|---|');
  for (const c of r.checks) lines.push(`| ${c.check.name} | ${c.checked} | ${c.violations} | ${c.violations ? '**failed**' : 'passed'} |`);
  lines.push(
    '',
    'After the storm: ' +
      Object.entries(r.sizes)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ') +
      '.',
  );
  if (result.failures.length) {
    lines.push('', 'Unexpected answers (up to 10):', '');
    for (const f of result.failures.slice(0, 10)) {
      lines.push(`- ${f.kind}: \`${f.request.slice(0, 200)}\` → ${f.status} \`${f.body.replace(/\s+/g, ' ').slice(0, 200)}\``);
    }
  }
  for (const c of broken) {
    lines.push('', `Failed check "${c.check.name}":`, '', '```sql', c.check.sql.replace(/\n\s+/g, '\n  '), '```', '', 'First rows:', '', '```');
    for (const row of c.sample) lines.push(JSON.stringify(row));
    lines.push('```');
  }
  if (r.pgLog.errors.size) {
    lines.push(
      '',
      "Other errors of the storm's backends in the PostgreSQL log (each ends an attempt the unit of work runs again, or a request refused): " +
        [...r.pgLog.errors]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `\`${k}\` × ${n}`)
          .join(', ') +
        '.',
    );
  }
  if (r.pgLog.deadlocks.length) {
    lines.push('', `Deadlocks in the PostgreSQL log (${r.pgLog.deadlocks.length}; the first 3):`, '', '```');
    for (const e of r.pgLog.deadlocks.slice(0, 3)) lines.push(...e, '');
    lines.push('```');
  }
  lines.push('', END);
  return lines.join('\n');
}

const SECTION_INTRO = `## Concurrent write storm (\`npm run bench:storm\`)

\`bench/storm.ts\`: the built server on a scratch database (\`cardwork_bench_storm_…\`, dropped at the end;
\`BENCH_KEEP_DB=1\` keeps it), a team of four, one project of \`BENCH_STORM_CARDS\` (300) cards in a random
tree with fields of eight types, two models, a column type and a label type with groups (some scoped at
lanes). Then \`BENCH_STORM_WORKERS\` (24) writers send random writes for \`BENCH_STORM_SECONDS\` (60),
each picked by weight from the kinds below, their targets read from the database once a second. A run
fails (exit 1) on any 5xx or dropped connection, any deadlock PostgreSQL broke in the database, or any
broken invariant; 200, 201, 400, 404 and 409 are what a write may answer while others change what it names.
\`BENCH_STORM_GIVE_UP_PERCENT\` (10) of the writes are left by their client after 1 to 40 ms, so the server
cancels their statements wherever they are (the "gave up" column).
The deadlocks' own lines come from \`BENCH_PG_LOG\` (\`/var/log/postgresql/postgresql-15-main.log\`).
The block below is rewritten by each run.
`;

function writeSection(text: string): void {
  if (DOC === '-') return;
  const doc = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '# Performance\n';
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const next = start >= 0 && end > start ? doc.slice(0, start) + text + doc.slice(end + END.length) : `${doc.trimEnd()}\n\n${SECTION_INTRO}\n${text}\n`;
  fs.writeFileSync(DOC, next);
}

async function main(): Promise<number> {
  if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw new Error('dist/src/main.js is missing: run `npm run build` first');
  const loadAtStart = os.loadavg()[0];
  await createScratchDatabase(SERVER_URL, DB);
  let server: RunningServer | null = null;
  const db = new pg.Client({ connectionString: DB_URL });
  let dbOpen = false;
  const tearDown = async () => {
    if (dbOpen) await db.end().catch(() => undefined);
    dbOpen = false;
    await server?.stop();
    if (!KEEP_DB) await dropScratchDatabase(SERVER_URL, DB).catch((e: unknown) => log(`could not drop ${DB}: ${String(e)}`));
    else log(`kept ${DB_URL} (BENCH_KEEP_DB=1)`);
    fs.rmSync(path.join(os.tmpdir(), `cardwork-bench-${process.pid}`), { recursive: true, force: true });
  };
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('interrupted: cleaning up');
    void tearDown().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    log(`starting the server on ${DB} (it migrates the database)`);
    server = await startServer(ROOT, DB_URL);
    await db.connect();
    dbOpen = true;
    const t0 = performance.now();
    const setup = await createProject(server);
    const setupSeconds = (performance.now() - t0) / 1000;
    const pgVersion = (await db.query<{ v: string }>(`SELECT version() AS v`)).rows[0].v;
    const settings = Object.fromEntries(
      (
        await db.query<{ name: string; setting: string }>(
          `SELECT name, setting FROM pg_settings WHERE name IN ('deadlock_timeout', 'max_connections') ORDER BY name`,
        )
      ).rows.map((x) => [x.name, x.setting]),
    );
    const machine = machineInfo(ROOT, pgVersion, settings, loadAtStart);
    log(`set up in ${setupSeconds.toFixed(1)} s; ${WORKERS} writers for ${SECONDS} s`);

    const before = await deadlockCount(db);
    const since = new Date(Date.now() - 1000);
    const result = await storm(server, setup, db);
    // A victim's backend reports its deadlock when it next goes idle: read again after a moment.
    await new Promise((r) => setTimeout(r, 1500));
    const deadlocks = (await deadlockCount(db)) - before;
    const pgLog = serverLog(since, result.backends);
    log(`storm done: deadlocks ${deadlocks}; checking the invariants`);
    const checks = await runChecks(db);
    const sizeRow = (
      await db.query(
        `SELECT (SELECT count(*) FROM cards.cards WHERE depth > 0) AS "cards",
                (SELECT count(*) FROM cards.cards WHERE hidden) AS "hidden cards",
                (SELECT count(*) FROM grouping.group_types) AS "group types",
                (SELECT count(*) FROM grouping.groups) AS "groups",
                (SELECT count(*) FROM grouping.memberships) AS "memberships",
                (SELECT count(*) FROM fields.scalar_values) AS "scalar values",
                (SELECT count(*) FROM fields.relationship_values) AS "relationship values",
                (SELECT count(*) FROM fields.member_values) AS "member values",
                (SELECT count(*) FROM fields.files) AS "files",
                (SELECT count(*) FROM cards.card_stream WHERE kind = 'comment') AS "comments",
                (SELECT count(*) FROM cards.card_stream) AS "stream entries"`,
      )
    ).rows[0] as Record<string, string>;
    const sizes = Object.fromEntries(Object.entries(sizeRow).map(([k, v]) => [k, Number(v)]));
    const report: Report = { result, checks, deadlocks, pgLog, sizes, setupSeconds, machine, loadAtEnd: os.loadavg()[0] };
    const text = block(report);
    process.stdout.write(`${text}\n`);
    if (result.failures.length) {
      const errors = server.output().split('\n').filter((l) => /error|exception/i.test(l)).slice(-20);
      if (errors.length) log(`server log, error lines (last 20):\n${errors.join('\n')}`);
    }
    writeSection(text);
    if (DOC !== '-') log(`wrote ${DOC}`);
    const fiveHundreds = [...result.tallies.values()].reduce((n, t) => n + statusCount(t, (s) => s >= 500), 0);
    const failed = fiveHundreds > 0 || result.networkErrors > 0 || deadlocks > 0 || checks.some((c) => c.violations > 0);
    log(failed ? 'FAILED' : 'passed');
    return failed ? 1 : 0;
  } finally {
    await tearDown();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    log(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
