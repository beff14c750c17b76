import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { EmbeddedUpkeep, UPKEEP_THRESHOLDS } from '../../../src/database/embedded-upkeep.js';
import { UnitOfWork } from '../../../src/shared/persistence/unit-of-work.js';
import { importClient, type ImportClient } from '../../support/import-client.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

const ROWS = 3000;

/** A sheet as the soak audit imported: values, a member, labels (a group every row is in) and a one-group column. */
function sheet(alice: TestUser, rows: number): Array<Array<string | number>> {
  const lines: Array<Array<string | number>> = [['Title', 'Estimate', 'Notes', 'Owner', 'Labels', 'Status']];
  for (let i = 1; i <= rows; i++) lines.push([`Task ${i}`, i % 13, `note ${i}`, `@${alice.username}`, `L${i % 7}, Common`, `S${i % 4}`]);
  return lines;
}

const MAPPING = {
  '0': { type: 'title' },
  '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
  '2': { type: 'attribute', attr_type: 'text', name: 'Notes' },
  '3': { type: 'attribute', attr_type: 'members', name: 'Owner' },
  '4': { type: 'context', name: 'Labels' },
  '5': { type: 'context', name: 'Status' },
};

// Always on the embedded PGlite database: a PostgreSQL server has autovacuum.
describe('the embedded database looks after itself (EmbeddedUpkeep: autovacuum has no place in PGlite)', () => {
  let t: TestApp;
  let alice: TestUser;
  let team: number;
  let imports: ImportClient;
  let ds: DataSource;
  let upkeep: EmbeddedUpkeep;

  beforeAll(async () => {
    t = await createTestApp({ embedded: true });
    alice = await t.user();
    team = await workspaceClient(t).team(alice);
    imports = importClient(t, alice);
    ds = t.app.get(DataSource);
    upkeep = t.app.get(EmbeddedUpkeep);
    // Only commits start a round here: the check every 10 s could run one where the test looks.
    upkeep.stopPeriodicCheck();
  });
  afterAll(() => t.close());

  const importInto = async (project: ProjectJson, rows: number) =>
    imports.importing({ discover_file_id: await imports.discover(sheet(alice, rows)), project_id: project.id, mapping: MAPPING, options: { ignore_header: true } }).expect(200);

  /** Rows read by sequential scans of the cards, their stream, values and memberships so far. */
  async function rowsScanned(): Promise<Record<string, number>> {
    await ds.query('SELECT pg_stat_force_next_flush()');
    const rows = (await ds.query(
      `SELECT schemaname || '.' || relname AS t, seq_tup_read::int AS n FROM pg_stat_user_tables
        WHERE schemaname || '.' || relname IN ('cards.cards', 'cards.card_stream', 'fields.scalar_values', 'fields.member_values', 'grouping.memberships')`,
    )) as Array<{ t: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.t, r.n]));
  }
  const scannedSince = (before: Record<string, number>, after: Record<string, number>) =>
    Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));

  const analyzeCount = async (table: string) => {
    await ds.query('SELECT pg_stat_force_next_flush()');
    const [row] = (await ds.query(`SELECT analyze_count::int AS n FROM pg_stat_user_tables WHERE relid = $1::regclass`, [table])) as Array<{ n: number }>;
    return row.n;
  };

  const estimate = async (table: string) =>
    Number(((await ds.query(`SELECT reltuples FROM pg_class WHERE oid = $1::regclass`, [table])) as Array<{ reltuples: string }>)[0].reltuples);

  it('an import into a database used while it was small checks its foreign keys by index, and its tables are analyzed before it answers', async () => {
    // Used while small: the foreign keys' checks and cascades run (and PostgreSQL keeps their plans) on tiny tables.
    const small = await workspaceClient(t).project(alice, team, 'Small');
    await importInto(small, 20);
    const first = ((await t.http.get(`${API}/projects/${small.id}/cards`).query({ only_ids: 'true' }).set(as(alice)).expect(200)).body as number[]).slice(0, 8);
    for (const id of first) await t.http.delete(`${API}/cards/${id}`).set(as(alice)).expect(200);

    const project = await workspaceClient(t).project(alice, team, 'Big');
    const before = await rowsScanned();
    const analyzed = await analyzeCount('cards.cards');
    await importInto(project, ROWS);
    // Analyzed inside the import's transaction as it grew the cards (each time past twice their
    // pages when last analyzed; twice for 3 000 cards), so the plans it kept were remade; then once
    // after its commit. Without the pauses between its batches, only that once.
    expect((await analyzeCount('cards.cards')) - analyzed).toBeGreaterThanOrEqual(2);
    // Before, each row's checks scanned the cards (plans kept from when they were few): millions of rows
    // read. Now a batch's statements may still scan a table the import has grown (its statistics are
    // the transaction's start's), a few thousand rows in all.
    const during = scannedSince(before, await rowsScanned());
    for (const n of Object.values(during)) expect(n).toBeLessThan(10 * ROWS);
    // Analyzed when the import committed, before anything else ran: not 0 as at the start.
    expect(await estimate('cards.cards')).toBeGreaterThanOrEqual(ROWS);
    expect(await estimate('grouping.memberships')).toBeGreaterThanOrEqual(3 * ROWS);

    // A card deleted now cascades to its stream and values by index, not by a scan per table. (The cards
    // are scanned: all but one are the siblings whose positions shift; so are the memberships, a third of
    // which are the column "Common" that the gap-closing trigger renumbers.)
    const [card] = (await t.http.get(`${API}/projects/${project.id}/cards`).query({ only_ids: 'true', per_page: '1' }).set(as(alice)).expect(200)).body as number[];
    const beforeDelete = await rowsScanned();
    await t.http.delete(`${API}/cards/${card}`).set(as(alice)).expect(200);
    const scanned = scannedSince(beforeDelete, await rowsScanned());
    expect([scanned['cards.card_stream'], scanned['fields.scalar_values'], scanned['fields.member_values']]).toEqual([0, 0, 0]);
  }, 300_000);

  it('remakes the plans a long unit keeps as the unit grows a table: analyzed in its pauses between batches', async () => {
    // A cascade whose plan PostgreSQL keeps for the session, made while the child table held a page:
    // a sequential scan of the children per parent deleted.
    await ds.query('CREATE SCHEMA probe');
    await ds.query('CREATE TABLE probe.parent (id int PRIMARY KEY)');
    await ds.query('CREATE TABLE probe.child (id serial PRIMARY KEY, parent_id int REFERENCES probe.parent ON DELETE CASCADE, pad text)');
    await ds.query('CREATE INDEX ON probe.child (parent_id)');
    await ds.query('INSERT INTO probe.parent SELECT g FROM generate_series(1, 20000) g');
    await ds.query('INSERT INTO probe.child (parent_id) SELECT g FROM generate_series(1, 10) g');
    await ds.query('ANALYZE probe.child');
    for (let id = 1; id <= 10; id++) await ds.query('DELETE FROM probe.parent WHERE id = $1', [id]);

    const uow = t.app.get(UnitOfWork);
    const scans = await uow.run(async () => {
      // A long unit grows the child table a batch at a time, pausing between its batches as an import does...
      for (let batch = 0; batch < 10; batch++) {
        await uow.manager.query(`INSERT INTO probe.child (parent_id, pad) SELECT g, repeat('x', 40) FROM generate_series($1::int, $2::int) g`, [
          11 + batch * 1999,
          10 + (batch + 1) * 1999,
        ]);
        await uow.betweenBatches(async () => undefined);
      }
      // ...then deletes parents one by one: each cascade finds its children by the index.
      for (let id = 11; id <= 110; id++) await uow.manager.query('DELETE FROM probe.parent WHERE id = $1', [id]);
      const [row] = (await uow.manager.query(
        `SELECT seq_scan::int AS seq, seq_tup_read::int AS read, idx_scan::int AS idx FROM pg_stat_xact_user_tables WHERE relid = 'probe.child'::regclass`,
      )) as Array<{ seq: number; read: number; idx: number }>;
      return row;
    });
    // With the plan kept from one page: 100 scans of 20 000 children each (2 million rows read).
    expect(scans.idx).toBe(100);
    expect(scans.read).toBeLessThan(20_000);
  }, 300_000);

  it('vacuums the tables a write left dead rows in, when it commits', async () => {
    const project = await workspaceClient(t).project(alice, team, 'Doomed');
    await importInto(project, 1000);
    await t.http.delete(`${API}/projects/${project.id}`).set(as(alice)).expect(200);
    await ds.query('SELECT pg_stat_force_next_flush()');
    const [cards] = (await ds.query(
      `SELECT n_dead_tup::int AS dead, last_vacuum FROM pg_stat_user_tables WHERE schemaname = 'cards' AND relname = 'cards'`,
    )) as Array<{ dead: number; last_vacuum: Date | null }>;
    expect(cards.last_vacuum).not.toBeNull();
    expect(cards.dead).toBeLessThan(UPKEEP_THRESHOLDS.vacuum.base + 1000 * UPKEEP_THRESHOLDS.vacuum.scale);
  }, 300_000);

  it('freezes the tables whose transaction ids are oldest, once past the threshold', async () => {
    const oldest = async () =>
      (await ds.query(
        `SELECT c.oid::regclass::text AS t, age(c.relfrozenxid) AS age FROM pg_class c
          LEFT JOIN pg_class s ON s.oid = c.reltoastrelid
         WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
         ORDER BY greatest(age(c.relfrozenxid), coalesce(age(s.relfrozenxid), 0)) DESC, c.oid LIMIT ${UPKEEP_THRESHOLDS.freezePerRound}`,
      )) as Array<{ t: string; age: number }>;
    const saved = { ...UPKEEP_THRESHOLDS };
    try {
      // A write of more than a MiB of log, so that the round looks at the counters.
      await importInto(await workspaceClient(t).project(alice, team, 'Aging'), 1000);
      const before = await oldest();
      expect(before[0].age).toBeGreaterThan(0);
      Object.assign(UPKEEP_THRESHOLDS, { freezeAfterXids: 0 });
      // One more write: its commit starts the round.
      await importInto(await workspaceClient(t).project(alice, team, 'Aging 2'), 1000);
      const ages = (await ds.query(`SELECT oid::regclass::text AS t, age(relfrozenxid) AS age FROM pg_class WHERE oid::regclass::text = ANY($1)`, [
        before.map((r) => r.t),
      ])) as Array<{ t: string; age: number }>;
      for (const r of ages) expect(r.age).toBeLessThan(before.find((b) => b.t === r.t)!.age);
    } finally {
      Object.assign(UPKEEP_THRESHOLDS, saved);
    }
  }, 300_000);
});
