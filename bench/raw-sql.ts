import pg from 'pg';
import { namingClient } from '../src/shared/persistence/prepared-statements.js';

/**
 * The raw-SQL side of the benchmark: the same rows the app writes, through
 * `pg` directly. The statements mirror
 * src/modules/card-hierarchy/infrastructure/card-tree.repository.ts and
 * activity/card-stream.recorder.ts; keep them in step when those change.
 */

export interface ParentContext {
  projectId: number;
  organizationId: number;
  parentId: number;
  userId: number;
}

const rawNames = new Map<string, string>();

/**
 * A `pg.Client` that sends every text as a named prepared statement (parsed
 * and planned once per connection), for `BENCH_RAW_PREPARED=1`: the raw side
 * with the same advantage as the app's marked statements. The raw side sends
 * a handful of fixed texts, so the names stay few.
 */
export const NamingClient = namingClient((text) => {
  // Only plain DML is named (utility statements such as VACUUM cannot be prepared).
  if (!/^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(text)) return undefined;
  if (!rawNames.has(text)) rawNames.set(text, `raw_${rawNames.size + 1}`);
  return rawNames.get(text);
});

/** Scratch databases are the bench's own: their names always say so. */
export function assertBenchDatabase(name: string): void {
  if (!/^[a-z0-9_]*bench[a-z0-9_]*$/.test(name)) throw new Error(`refusing to touch database "${name}"`);
}

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function createScratchDatabase(serverUrl: string, name: string): Promise<void> {
  assertBenchDatabase(name);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}

export async function dropScratchDatabase(serverUrl: string, name: string): Promise<void> {
  assertBenchDatabase(name);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** BEGIN, the work, COMMIT (ROLLBACK on error) on one pooled connection. */
async function inTransaction(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<void>): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await work(c);
    await c.query('COMMIT');
  } catch (error) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    c.release();
  }
}

/**
 * One card creation as the app's transaction does it: lock the parent, then
 * one statement that takes the next ref (and bumps the totals) from the
 * project counters, computes the position (highest sibling position + 1) and
 * inserts the card (CardTreeRepository.insertChild), then its stream entry.
 */
export function rawCreateCard(pool: pg.Pool, ctx: ParentContext, title: string): Promise<void> {
  return inTransaction(pool, async (c) => {
    const { rows: parents } = await c.query<{ id: string; ancestor_ids: string[]; hidden: boolean }>(
      `SELECT id, ancestor_ids, hidden FROM cards.cards WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
      [[ctx.parentId]],
    );
    const parent = parents[0];
    const ancestors = [...parent.ancestor_ids, parent.id];
    const { rows: cards } = await c.query<{ id: string; ref: number }>(
      `WITH r AS (
         UPDATE cards.project_counters
            SET next_ref = next_ref + 1, card_count = card_count + 1, visible_count = visible_count + $8::int
          WHERE project_id = $1
          RETURNING next_ref - 1 AS ref)
       INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, position, hidden, created_by)
       SELECT $1, $2, $3, $4::bigint[], $5, r.ref, $6,
              (SELECT coalesce(max(position) + 1, 0) FROM cards.cards WHERE parent_id = $3), $7, $9
         FROM r
       RETURNING id, ref`,
      [ctx.projectId, ctx.organizationId, ctx.parentId, ancestors, ancestors.length, title, parent.hidden, parent.hidden ? 0 : 1, ctx.userId],
    );
    await c.query(
      `INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
       VALUES ($1, $2, 'activity', 'card.created', $3, NULL, $4::jsonb)`,
      [cards[0].id, ctx.projectId, ctx.userId, JSON.stringify({ title, ref: cards[0].ref, parent_id: ctx.parentId })],
    );
  });
}

/**
 * Fills a project (that has only its top-level card) to `total` cards in two
 * levels: about √total children of the top-level card, each with the rest
 * spread evenly. Refs 1…total, dense positions, ancestor paths and depths as
 * the app keeps them, and the project counters set to match. No stream
 * entries (the listing does not read them).
 */
export async function fillProject(
  client: pg.Client,
  ctx: ParentContext,
  total: number,
  progress: (done: number) => void,
  options: { vacuum?: boolean } = {},
): Promise<void> {
  const top = Math.max(1, Math.min(total, Math.round(Math.sqrt(total))));
  const rest = total - top;
  const perParent = Math.floor(rest / top);
  const extra = rest - perParent * top; // the first `extra` parents get one more child
  await client.query(
    `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, position, created_by)
     SELECT $1, $2, $3, ARRAY[$3]::bigint[], 1, g, 'Card ' || g, g - 1, $4
       FROM generate_series(1, $5::int) g`,
    [ctx.projectId, ctx.organizationId, ctx.parentId, ctx.userId, top],
  );
  progress(top);
  const chunk = 100; // parents per statement (~100k rows at 1M)
  for (let from = 0; from < top; from += chunk) {
    const to = Math.min(top, from + chunk);
    // Refs of the second level follow parent position, then child position.
    await client.query(
      `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, position, created_by)
       SELECT $1, $2, l.id, ARRAY[$3, l.id]::bigint[], 2, r.ref, 'Card ' || r.ref, j, $4
         FROM cards.cards l
        CROSS JOIN LATERAL generate_series(0, $5::int + (l.position < $6::int)::int - 1) j
        CROSS JOIN LATERAL (SELECT $7::int + l.position * $5::int + least(l.position, $6::int) + j + 1 AS ref) r
        WHERE l.parent_id = $3 AND l.position >= $8 AND l.position < $9
        ORDER BY l.position, j`,
      [ctx.projectId, ctx.organizationId, ctx.parentId, ctx.userId, perParent, extra, top, from, to],
    );
    progress(top + Math.min(rest, to * perParent + Math.min(to, extra)));
  }
  await client.query(
    `UPDATE cards.project_counters SET next_ref = $2::int + 1, card_count = $2, visible_count = $2 WHERE project_id = $1`,
    [ctx.projectId, total],
  );
  if (options.vacuum !== false) await client.query(`VACUUM (ANALYZE) cards.cards`);
}

const COLUMNS = `id, project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, state,
  is_archived, hidden, position, model_id, created_at, updated_at`;

/** The app's listing page query (CardTreeRepository.listPage / listIds, visible cards). */
export function listingQuery(onlyIds: boolean): string {
  const ids = `SELECT id FROM cards.cards
        WHERE project_id = $1 AND depth > 0 AND NOT hidden
        ORDER BY id LIMIT $2 OFFSET $3`;
  if (onlyIds) return ids;
  // listPage: a deferred join (the page's ids from the index, then their rows).
  return `SELECT ${COLUMNS} FROM cards.cards WHERE id IN (${ids}) ORDER BY id`;
}

/** The app's keyset page query (CardTreeRepository.listPage after a cursor, visible cards): $3 is the last id seen. */
export function keysetQuery(onlyIds: boolean): string {
  const ids = `SELECT id FROM cards.cards
        WHERE project_id = $1 AND depth > 0 AND NOT hidden AND id > $3
        ORDER BY id LIMIT $2`;
  return onlyIds ? ids : `SELECT ${COLUMNS} FROM cards.cards WHERE id IN (${ids}) ORDER BY id`;
}

export interface AttributeContext {
  cardId: number;
  projectId: number;
  attributeId: number;
  name: string;
  userId: number;
}

/**
 * Setting one number field as the app's transaction does it
 * (CardValuesService.setOne): lock the card by marking it changed, read the
 * old value, upsert the new one, record `card.attribute_changed` with the
 * before and after values.
 */
export function rawSetAttribute(pool: pg.Pool, ctx: AttributeContext, value: number): Promise<void> {
  return inTransaction(pool, async (c) => {
    await c.query(`UPDATE cards.cards SET updated_at = now() WHERE id = $1`, [ctx.cardId]);
    const { rows } = await c.query<{ value: unknown }>(
      `SELECT value FROM fields.scalar_values WHERE card_id = $1 AND attribute_id = $2`,
      [ctx.cardId, ctx.attributeId],
    );
    await c.query(
      `INSERT INTO fields.scalar_values (card_id, attribute_id, value) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (card_id, attribute_id) DO UPDATE SET value = EXCLUDED.value`,
      [ctx.cardId, ctx.attributeId, JSON.stringify(value)],
    );
    const data = { attribute_id: ctx.attributeId, attribute: ctx.name, type: 'number', operation: 'set', from: rows[0]?.value ?? null, to: value };
    await c.query(
      `INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
       VALUES ($1, $2, 'activity', 'card.attribute_changed', $3, NULL, $4::jsonb)`,
      [ctx.cardId, ctx.projectId, ctx.userId, JSON.stringify(data)],
    );
  });
}

/** Statements of one raw-SQL operation, as the counting relay counts the app's. */
export const RAW_STATEMENTS = { create: 5, setAttribute: 6, listPage: 1 };

/**
 * Adds a subtree of `size` cards under `parentId` (the last child): its root,
 * about √size children of the root, and the rest spread evenly under those.
 * Refs continue the project counter, positions are dense, ancestor paths and
 * depths as the app keeps them, counters bumped. Returns the root's id.
 */
export async function fillSubtree(client: pg.Client, ctx: ParentContext, size: number): Promise<number> {
  const { rows: parents } = await client.query<{ ancestor_ids: string[] }>(`SELECT ancestor_ids FROM cards.cards WHERE id = $1`, [ctx.parentId]);
  const path = [...parents[0].ancestor_ids.map(Number), ctx.parentId];
  const { rows: counter } = await client.query<{ next_ref: number }>(
    `UPDATE cards.project_counters SET next_ref = next_ref + $2, card_count = card_count + $2, visible_count = visible_count + $2
      WHERE project_id = $1 RETURNING next_ref - $2 AS next_ref`,
    [ctx.projectId, size],
  );
  const ref = Number(counter[0].next_ref);
  const { rows: roots } = await client.query<{ id: string }>(
    `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, position, created_by)
     SELECT $1, $2, $3, $4::bigint[], cardinality($4::bigint[]), $5, 'Subtree ' || $6::int,
            (SELECT coalesce(max(position) + 1, 0) FROM cards.cards WHERE parent_id = $3), $7
     RETURNING id`,
    [ctx.projectId, ctx.organizationId, ctx.parentId, path, ref, size, ctx.userId],
  );
  const root = Number(roots[0].id);
  const rest = size - 1;
  const mid = Math.max(0, Math.min(rest, Math.round(Math.sqrt(rest))));
  if (!mid) return root;
  const rootPath = [...path, root];
  await client.query(
    `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, position, created_by)
     SELECT $1, $2, $3, $4::bigint[], cardinality($4::bigint[]), $5::int + g, 'Card ' || ($5::int + g), g - 1, $6
       FROM generate_series(1, $7::int) g`,
    [ctx.projectId, ctx.organizationId, root, rootPath, ref, ctx.userId, mid],
  );
  const leaves = rest - mid;
  const per = Math.floor(leaves / mid);
  const extra = leaves - per * mid;
  await client.query(
    `INSERT INTO cards.cards (project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, position, created_by)
     SELECT $1, $2, l.id, $4::bigint[] || l.id, cardinality($4::bigint[]) + 1, r.ref, 'Card ' || r.ref, j, $6
       FROM cards.cards l
      CROSS JOIN LATERAL generate_series(0, $7::int + (l.position < $8::int)::int - 1) j
      CROSS JOIN LATERAL (SELECT $5::int + $9::int + l.position * $7::int + least(l.position, $8::int) + j + 1 AS ref) r
      WHERE l.parent_id = $3
      ORDER BY l.position, j`,
    [ctx.projectId, ctx.organizationId, root, rootPath, ref, ctx.userId, per, extra, mid],
  );
  return root;
}
