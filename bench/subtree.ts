import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { ApiClient } from './http.js';
import { percentile } from './stats.js';

/**
 * Subtree operations inside the big project (issue 15.4): moving, archiving,
 * restoring and deleting a subtree of s cards must cost time in proportion to
 * s, not to the project; and moving a small subtree must cost the same in a
 * project of a dozen cards and in one of a million. Each step is checked
 * against the rows afterwards (paths, positions, hidden flags, counters,
 * stream entries).
 */

export interface SubtreeResult {
  size: number;
  /** Milliseconds of each operation through the API. */
  ms: { move: number; archive: number; restore: number; delete: number };
  /** Milliseconds per card of the four operations together. */
  msPerCard: number;
}

export interface SmallMoveResult {
  /** Median ms of moving a 10-card subtree between two parents, in a small project and in the big one. */
  smallProjectMs: number;
  bigProjectMs: number;
  moves: number;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export class SubtreeBench {
  constructor(
    private readonly api: ApiClient,
    private readonly pool: pg.Pool,
  ) {}

  private async call(method: string, path: string, body?: unknown): Promise<void> {
    const res = await this.api.request(method, path, body);
    if (res.status !== 200) throw new Error(`${method} ${path} → ${res.status}: ${res.body.slice(0, 300)}`);
  }

  private async one<T>(sql: string, params: unknown[]): Promise<T> {
    return (await this.pool.query(sql, params)).rows[0] as T;
  }

  /** Move under `newParent`, archive, restore and delete the subtree of `root` (`size` cards), checking each step. */
  async run(projectId: number, root: number, size: number, oldParent: number, newParent: number): Promise<SubtreeResult> {
    const move = await timed(() => this.call('POST', `/cards/${root}/relocate`, { parent_id: newParent }));
    await this.checkMoved(root, size, oldParent, newParent);
    const archive = await timed(() => this.call('POST', `/cards/${root}/archive`));
    await this.checkHidden(projectId, root, size, size);
    const restore = await timed(() => this.call('DELETE', `/cards/${root}/archive`));
    await this.checkHidden(projectId, root, size, 0);
    await this.checkStream(root, ['card.moved', 'card.archived', 'card.restored']);
    const del = await timed(() => this.call('DELETE', `/cards/${root}`));
    await this.checkDeleted(projectId, root, newParent);
    const ms = { move, archive, restore, delete: del };
    return { size, ms, msPerCard: (move + archive + restore + del) / size };
  }

  /** Median time of `moves` moves of a subtree between parents a and b (it starts under a). */
  async smallMoves(root: number, size: number, a: number, b: number, moves: number): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < moves; i++) {
      const [from, to] = i % 2 === 0 ? [a, b] : [b, a];
      times.push(await timed(() => this.call('POST', `/cards/${root}/relocate`, { parent_id: to })));
      if (i < 2 || i === moves - 1) await this.checkMoved(root, size, from, to);
    }
    return percentile([...times].sort((x, y) => x - y), 50);
  }

  private async checkMoved(root: number, size: number, oldParent: number, newParent: number): Promise<void> {
    const r = await this.one<{ parent_id: string; n: number; bad_paths: number; bad_depth: number }>(
      `WITH p AS (SELECT ancestor_ids || id AS path FROM cards.cards WHERE id = $2)
       SELECT (SELECT parent_id FROM cards.cards WHERE id = $1) AS parent_id,
              count(*)::int AS n,
              count(*) FILTER (WHERE c.ancestor_ids[1:cardinality(p.path)] <> p.path)::int AS bad_paths,
              count(*) FILTER (WHERE c.depth <> cardinality(c.ancestor_ids))::int AS bad_depth
         FROM cards.cards c, p
        WHERE c.id = $1 OR c.ancestor_ids @> ARRAY[$1]::bigint[]`,
      [root, newParent],
    );
    if (Number(r.parent_id) !== newParent || r.n !== size || r.bad_paths || r.bad_depth) {
      throw new Error(`subtree ${root} after the move: ${JSON.stringify(r)} (expected ${size} cards under ${newParent})`);
    }
    for (const parent of [oldParent, newParent]) await this.checkDense(parent);
  }

  private async checkDense(parent: number): Promise<void> {
    const r = await this.one<{ n: number; max: number | null; distinct: number }>(
      `SELECT count(*)::int AS n, max(position) AS max, count(DISTINCT position)::int AS distinct
         FROM cards.cards WHERE parent_id = $1`,
      [parent],
    );
    if (r.distinct !== r.n || (r.n > 0 && r.max !== r.n - 1)) throw new Error(`positions under ${parent} are not dense: ${JSON.stringify(r)}`);
  }

  /** `hidden` of the subtree, and the project's counters against its rows. */
  private async checkHidden(projectId: number, root: number, size: number, hidden: number): Promise<void> {
    const r = await this.one<{ hidden: number }>(
      `SELECT count(*) FILTER (WHERE hidden)::int AS hidden FROM cards.cards WHERE id = $1 OR ancestor_ids @> ARRAY[$1]::bigint[]`,
      [root],
    );
    if (r.hidden !== hidden) throw new Error(`subtree ${root} of ${size}: ${r.hidden} hidden cards, expected ${hidden}`);
    await this.checkCounters(projectId);
  }

  private async checkCounters(projectId: number): Promise<void> {
    const r = await this.one<{ cards: number; visible: number; card_count: number; visible_count: number }>(
      `SELECT count(*)::int AS cards, (count(*) FILTER (WHERE NOT hidden))::int AS visible,
              (SELECT card_count FROM cards.project_counters WHERE project_id = $1) AS card_count,
              (SELECT visible_count FROM cards.project_counters WHERE project_id = $1) AS visible_count
         FROM cards.cards WHERE project_id = $1 AND depth > 0`,
      [projectId],
    );
    if (r.cards !== Number(r.card_count) || r.visible !== Number(r.visible_count)) {
      throw new Error(`project ${projectId}: counters disagree with the rows ${JSON.stringify(r)}`);
    }
  }

  private async checkStream(cardId: number, actions: string[]): Promise<void> {
    const { rows } = await this.pool.query<{ action: string }>(
      `SELECT action FROM cards.card_stream WHERE card_id = $1 AND action = ANY($2) ORDER BY id`,
      [cardId, actions],
    );
    if (rows.map((r) => r.action).join() !== actions.join()) {
      throw new Error(`card ${cardId}: stream ${rows.map((r) => r.action).join()} ≠ ${actions.join()}`);
    }
  }

  private async checkDeleted(projectId: number, root: number, parent: number): Promise<void> {
    const r = await this.one<{ left: number; entries: number }>(
      `SELECT (SELECT count(*)::int FROM cards.cards WHERE id = $1 OR ancestor_ids @> ARRAY[$1]::bigint[]) AS left,
              (SELECT count(*)::int FROM cards.card_stream WHERE card_id = $2 AND action = 'card.deleted') AS entries`,
      [root, parent],
    );
    if (r.left !== 0 || r.entries < 1) throw new Error(`subtree ${root} after the deletion: ${JSON.stringify(r)}`);
    await this.checkDense(parent);
    await this.checkCounters(projectId);
  }
}
