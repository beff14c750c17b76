import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { CardCreated, CardEventBatch } from '../../../src/shared/events/card.events.js';
import { EventBus } from '../../../src/shared/events/event-bus.js';
import { PreparingClient } from '../../../src/shared/persistence/prepared-statements.js';
import { requestStatements } from '../../support/request-statements.js';
import { DISCOVER, IMPORT, importWorld, type ImportWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { type ProjectJson } from '../../support/workspace-client.js';
/** Three write batches of the importer (500 rows each), the last one short. */
const ROWS = 1234;
/** The pool's statements go through PreparingClient on the server only (not on embedded PGlite). */
const onServer = Boolean(process.env.DATABASE_URL);

interface Row {
  title: string;
  estimate: number;
  notes: string;
  due: string;
}

const rowAt = (i: number): Row => ({
  title: `Task ${i}`,
  estimate: i % 13,
  notes: i % 7 === 0 ? '' : `Notes for task ${i}`, // an empty cell writes no value
  due: `2026-0${1 + (i % 9)}-1${i % 10}`,
});

const taskRows = (n: number) => Array.from({ length: n }, (_, k) => rowAt(k + 1));

function csv(header: string[], lines: string[][]): Buffer {
  const cell = (text: string) => (/[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  return Buffer.from([header, ...lines].map((l) => l.map(cell).join(',')).join('\n') + '\n');
}

const TASK_MAPPING = {
  '0': { type: 'title' },
  '1': { type: 'attribute', attr_type: 'number', name: 'Estimate' },
  '2': { type: 'attribute', attr_type: 'text', name: 'Notes' },
  '3': { type: 'attribute', attr_type: 'date', name: 'Due' },
};

/**
 * What the pool sends, in order: the locks of cards (`lockMany`), the sends
 * and returns of the bulk card inserts, and the publications of their
 * `card.created` batches (`publish k`, k-th batch).
 */
class StatementProbe {
  readonly log: string[] = [];
  private sends = 0;
  private publications = 0;
  private readonly proto = PreparingClient.prototype as unknown as { query: (this: unknown, ...args: unknown[]) => unknown };
  private readonly original = this.proto.query;

  constructor(bus: EventBus) {
    bus.subscribe(CardEventBatch, 'in-tx', (batch) => {
      if (this.watching && (batch as CardEventBatch).events[0] instanceof CardCreated) this.log.push(`publish ${++this.publications}`);
    });
  }

  private watching = false;

  start(): void {
    const probe = this;
    this.log.length = 0;
    this.sends = 0;
    this.publications = 0;
    this.watching = true;
    this.proto.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : '';
      const result = probe.original.call(this, config, ...rest);
      if (text.includes('INSERT INTO cards.cards') && text.includes('unnest($4::bigint[], $5::text[])')) {
        const k = ++probe.sends;
        probe.log.push(`send ${k}`);
        (result as Promise<unknown>).then(
          () => probe.log.push(`return ${k}`),
          () => undefined,
        );
      } else if (text.includes('ORDER BY c.id FOR UPDATE OF c')) {
        probe.log.push('lock');
      }
      return result;
    };
  }

  stop(): void {
    this.proto.query = this.original;
    this.watching = false;
  }

  at(entry: string): number {
    const i = this.log.indexOf(entry);
    if (i < 0) throw new Error(`${entry} not in ${this.log.join(', ')}`);
    return i;
  }
}

describe('an import of several write batches', () => {
  let t: TestApp, alice: TestUser, ws: ImportWorld['ws'], team: number;
  let db: DataSource;
  let probe: StatementProbe;
  /** The k-th `card.created` batch published while set fails (a fault after its statement returned). */
  let failPublication: number | undefined;
  let publications = 0;

  beforeAll(async () => {
    ({ t, alice, ws, team } = await importWorld());
    db = t.app.get(DataSource);
    const bus = t.app.get(EventBus);
    probe = new StatementProbe(bus);
    bus.subscribe(CardEventBatch, 'in-tx', (batch) => {
      if (!((batch as CardEventBatch).events[0] instanceof CardCreated) || failPublication === undefined) return;
      if (++publications === failPublication) throw new Error('injected fault while publishing');
    });
  });
  afterEach(async () => {
    probe.stop();
    failPublication = undefined;
    publications = 0;
    await db.query(`DROP TRIGGER IF EXISTS import_test_fault ON cards.cards`);
  });
  afterAll(() => t.close());

  /** Discovers and imports the file; the import's answer, checked to have `status`. */
  async function importCsv(project: ProjectJson, file: Buffer, mapping: Record<string, unknown>, status: number) {
    const discovered = await t.http.post(DISCOVER).set(as(alice)).attach('file', file, 'rows.csv').expect(201);
    return t.http
      .post(IMPORT)
      .set(as(alice))
      .send({ discover_file_id: discovered.body.file_id, project_id: project.id, options: { ignore_header: true }, mapping })
      .expect(status);
  }

  const importTasks = (project: ProjectJson, rows: Row[], status: number) =>
    importCsv(
      project,
      csv(['Title', 'Estimate', 'Notes', 'Due'], rows.map((r) => [r.title, String(r.estimate), r.notes, r.due])),
      TASK_MAPPING,
      status,
    );

  /** The project's cards below the top-level card, in ref order. */
  async function cardRows(project: ProjectJson) {
    return (await db.query(
      `SELECT id::int, ref, parent_id::int, position, title, state, depth FROM cards.cards
        WHERE project_id = $1 AND depth > 0 ORDER BY ref`,
      [project.id],
    )) as Array<{ id: number; ref: number; parent_id: number; position: number; title: string; state: string; depth: number }>;
  }

  /** The stream entries of the project's cards below the top-level card, in the order recorded (id). */
  async function streamRows(project: ProjectJson) {
    return (await db.query(
      `SELECT card_id::int, kind, action, user_id::int, content, data FROM cards.card_stream
        WHERE project_id = $1 AND card_id <> $2 ORDER BY id`,
      [project.id, project.top_level_card_id],
    )) as Array<{ card_id: number; kind: string; action: string; user_id: number; content: null; data: Record<string, unknown> }>;
  }

  /** Everything a failed import must leave as it was. */
  async function snapshot(project: ProjectJson) {
    const [cards, fields, stream, counters] = await Promise.all([
      cardRows(project),
      db.query(`SELECT id, name FROM fields.attributes WHERE project_id = $1 ORDER BY id`, [project.id]),
      db.query(`SELECT id, action FROM cards.card_stream WHERE project_id = $1 ORDER BY id`, [project.id]),
      db.query(`SELECT next_ref, card_count, visible_count FROM cards.project_counters WHERE project_id = $1`, [project.id]),
    ]);
    return { cards, fields, stream, counters };
  }

  it('writes the cards, refs in row order, positions, values and stream entries of a batch at a time', async () => {
    const project = await ws.project(alice, team, 'Batches');
    const rows = taskRows(ROWS);
    await importTasks(project, rows, 200);

    const cards = await cardRows(project);
    expect(cards.map((c) => [c.ref, c.title, c.parent_id, c.position, c.state, c.depth])).toEqual(
      rows.map((r, k) => [k + 1, r.title, project.top_level_card_id, k, 'undecided', 1]),
    );
    const fields = (await db.query(`SELECT id::int, name, type FROM fields.attributes WHERE project_id = $1 ORDER BY id`, [project.id])) as Array<{
      id: number;
      name: string;
      type: string;
    }>;
    expect(fields.map((f) => f.name)).toEqual(['Estimate', 'Notes', 'Due']);
    const values = await db.query(
      `SELECT c.ref, v.attribute_id::int, v.value FROM fields.scalar_values v JOIN cards.cards c ON c.id = v.card_id
        WHERE c.project_id = $1 ORDER BY c.ref, v.attribute_id`,
      [project.id],
    );
    const valuesOf = (r: Row) => [r.estimate, r.notes, r.due].map((value, f) => ({ field: fields[f], value })).filter((v) => v.value !== '');
    expect(values).toEqual(rows.flatMap((r, k) => valuesOf(r).map((v) => ({ ref: k + 1, attribute_id: v.field.id, value: v.value }))));

    // As a batch has always recorded them: its cards' `card.created` in row
    // order, then its values' `card.attribute_changed`, batch after batch.
    const created = (k: number) => ({
      card_id: cards[k].id,
      kind: 'log',
      action: 'card.created',
      user_id: alice.id,
      content: null,
      data: { title: rows[k].title, ref: k + 1, parent_id: project.top_level_card_id },
    });
    const changed = (k: number) =>
      valuesOf(rows[k]).map(({ field, value }) => ({
        card_id: cards[k].id,
        kind: 'log',
        action: 'card.attribute_changed',
        user_id: alice.id,
        content: null,
        data: { attribute_id: field.id, attribute: field.name, type: field.type, operation: 'set', from: null, to: value },
      }));
    const expected = [];
    for (let first = 0; first < ROWS; first += 500) {
      const batch = rows.slice(first, first + 500).map((_, i) => first + i);
      expected.push(...batch.map(created), ...batch.flatMap(changed));
    }
    expect(await streamRows(project)).toEqual(expected);
    const [counters] = await db.query(`SELECT next_ref, card_count, visible_count FROM cards.project_counters WHERE project_id = $1`, [project.id]);
    expect(counters).toEqual({ next_ref: ROWS + 1, card_count: ROWS, visible_count: ROWS });
  });

  (onServer ? it : it.skip)('locks the parent once, sends each batch once the one before returned, and publishes a batch while the next runs', async () => {
    const project = await ws.project(alice, team, 'Pipelined');
    probe.start();
    await importTasks(project, taskRows(ROWS), 200);
    probe.stop();
    const { log } = probe;
    expect(log.filter((e) => e === 'lock')).toEqual(['lock']);
    expect(probe.at('lock')).toBeLessThan(probe.at('send 1'));
    for (const k of [1, 2]) {
      expect(probe.at(`send ${k + 1}`)).toBeGreaterThan(probe.at(`return ${k}`));
      expect(probe.at(`publish ${k}`)).toBeGreaterThan(probe.at(`send ${k + 1}`));
    }
    expect(probe.at('publish 3')).toBeGreaterThan(probe.at('return 3'));
    expect(log.filter((e) => e.startsWith('send'))).toEqual(['send 1', 'send 2', 'send 3']);
  });

  it.each([
    ['a later batch', 'Task 777'],
    ['the last batch', 'Task 1234'],
  ])('a statement of %s that fails rolls the whole import back', async (_, title) => {
    const project = await ws.project(alice, team, `Fails at ${title}`);
    const before = await snapshot(project);
    await db.query(`CREATE OR REPLACE FUNCTION public.import_test_fault() RETURNS trigger LANGUAGE plpgsql
                      AS $$ BEGIN RAISE EXCEPTION 'injected fault on %', NEW.title; END $$`);
    await db.query(`CREATE TRIGGER import_test_fault BEFORE INSERT ON cards.cards FOR EACH ROW
                      WHEN (NEW.title = '${title}') EXECUTE FUNCTION public.import_test_fault()`);
    await importTasks(project, taskRows(ROWS), 500);
    expect(await snapshot(project)).toEqual(before);

    await db.query(`DROP TRIGGER import_test_fault ON cards.cards`);
    await importTasks(project, taskRows(ROWS), 200);
    expect((await cardRows(project)).map((c) => c.ref)).toEqual(taskRows(ROWS).map((_, k) => k + 1));
  });

  it('a failure publishing a batch while the next one is in the database rolls the whole import back', async () => {
    const project = await ws.project(alice, team, 'Fails publishing');
    const before = await snapshot(project);
    failPublication = 1;
    await importTasks(project, taskRows(ROWS), 500);
    expect(await snapshot(project)).toEqual(before);
  });

  /**
   * The import's statements, as sent (the query runner's calls): it is
   * discovered first, then sent with `body`, and must answer 200.
   */
  async function importSpied(file: Buffer, body: Record<string, unknown>) {
    const discovered = await t.http.post(DISCOVER).set(as(alice)).attach('file', file, 'rows.csv').expect(201);
    const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
    try {
      const res = await t.http
        .post(IMPORT)
        .set(as(alice))
        .send({ discover_file_id: discovered.body.file_id, options: { ignore_header: true }, ...body })
        .expect(200);
      return { res, texts: sent.mock.calls.map(([text]) => String(text)) };
    } finally {
      sent.mockRestore();
    }
  }

  /** What the value writes cost: the statements, the holds of fields FOR SHARE, and the reads of the project's definitions in the transaction. */
  function costOf(texts: string[]) {
    const inTransaction = texts.slice(texts.indexOf('START TRANSACTION'));
    return {
      statements: requestStatements(texts.map((text) => [text])).length,
      fieldShareLocks: texts.filter((text) => /FROM fields\.attributes[\s\S]*FOR SHARE/.test(text)),
      definitionReads: inTransaction.filter((text) => /FROM fields\.attributes WHERE project_id/.test(text)).length,
    };
  }

  /** How many of the project's cards hold `stored`. */
  async function holding(project: ProjectJson, stored: unknown): Promise<number> {
    const [values] = await db.query(
      `SELECT count(*)::int AS n FROM fields.scalar_values v JOIN cards.cards c ON c.id = v.card_id WHERE c.project_id = $1 AND v.value = $2::jsonb`,
      [project.id, JSON.stringify(stored)],
    );
    return values.n;
  }

  const valueMapping = (type: string) => ({ '0': { type: 'title' }, '1': { type: 'attribute', attr_type: type, name: 'V' } });
  const valueFile = (n: number, cell: (k: number) => string, title = (k: number) => `Row ${k}`) =>
    csv(['Title', 'V'], Array.from({ length: n }, (_, k) => [title(k), cell(k)]));

  /**
   * The import holds the fields it fills from its transaction's first step
   * and parses each batch's values on definitions read once after that, so
   * the bulk value writer does not hold the date fields again (FOR SHARE)
   * per batch of updates (FieldsApi.writeValuesMany, fieldsHeld): an update
   * of dates costs the statements an update of numbers does. Nor are the
   * definitions read again per batch to parse the matched cards' values.
   */
  it('updates the matched cards of each batch with dates in as many statements as with numbers, holding no field again', async () => {
    const n = 600; // two write batches
    const run = async (type: 'date' | 'number', first: (k: number) => string, then: string, stored: unknown) => {
      const project = await ws.project(alice, team, `Updates of ${type}s`);
      const mapping = valueMapping(type);
      await importCsv(project, valueFile(n, first), mapping, 200);
      const { res, texts } = await importSpied(valueFile(n, () => then), { project_id: project.id, update_field: 'title', mapping });
      expect(res.body).toMatchObject({ created: 0, updated: n });
      return { ...costOf(texts), updated: await holding(project, stored) };
    };
    const dates = await run('date', (k) => `2026-01-${10 + (k % 10)}`, '2026-02-01', '2026-02-01');
    const numbers = await run('number', (k) => String(k), '7', 7);
    // One read of the definitions in the transaction (WriteTargets.projectFields); before, one more per batch.
    expect(dates).toEqual({ statements: numbers.statements, fieldShareLocks: [], definitionReads: 1, updated: n });
    expect(numbers).toMatchObject({ definitionReads: 1, updated: n });
  });

  /**
   * New cards' values alike (CardsApi.openBatches and createPrepared with
   * fieldsHeld): written along with their cards (no context mapped) or after
   * their groups (a context), a creation of dates costs the statements one
   * of numbers does, into a field the import holds (created by an import
   * before) as into one it creates.
   */
  it.each([
    ['written along with their cards', {}],
    ['written after their groups', { '2': { type: 'context', name: 'Stage' } }],
  ])('creates cards of each batch with dates (%s) in as many statements as with numbers, holding no field again', async (_, context) => {
    const n = 600; // two write batches
    const run = async (type: 'date' | 'number', cell: string, stored: unknown, fieldExists: boolean) => {
      const project = await ws.project(alice, team, `New cards with ${type}s`);
      const mapping = { ...valueMapping(type), ...context };
      const file = (title: (k: number) => string) =>
        csv(['Title', 'V', 'Stage'], Array.from({ length: n }, (_, k) => [title(k), cell, 'Todo']));
      if (fieldExists) await importCsv(project, file((k) => `Earlier ${k}`), mapping, 200);
      const { res, texts } = await importSpied(file((k) => `Row ${k}`), { project_id: project.id, mapping });
      expect(res.body).toMatchObject({ created: n, updated: 0 });
      const { statements, fieldShareLocks } = costOf(texts);
      return { statements, fieldShareLocks, written: (await holding(project, stored)) - (fieldExists ? n : 0) };
    };
    for (const fieldExists of [true, false]) {
      const dates = await run('date', '2026-02-01', '2026-02-01', fieldExists);
      const numbers = await run('number', '7', 7, fieldExists);
      expect(dates).toEqual({ statements: numbers.statements, fieldShareLocks: [], written: n });
      expect(numbers.written).toBe(n);
    }
  });

  it('batches with children or groups are written as before, between batches of one statement', async () => {
    const project = await ws.project(alice, team, 'Mixed');
    const n = 1600;
    const subtasks = (i: number) => (i === 600 ? 'first\nsecond' : '');
    const labels = (i: number) => (i === 1550 ? 'red' : '');
    const file = csv(
      ['Title', 'Notes', 'Labels', 'Subtasks'],
      Array.from({ length: n }, (_, k) => [`Row ${k + 1}`, `note ${k + 1}`, labels(k + 1), subtasks(k + 1)]),
    );
    probe.start();
    const res = await importCsv(project, file, {
      '0': { type: 'title' },
      '1': { type: 'attribute', attr_type: 'text', name: 'Notes' },
      '2': { type: 'context', name: 'Labels' },
      '3': { type: 'children' },
    }, 200);
    probe.stop();
    expect(res.body).toEqual({ project_id: project.id, created: n, updated: 0, skipped: 0, children_created: 2 });

    // Batches: rows 1–500 (one statement), 501–1000 (children: two levels, the
    // children's refs after the batch's cards), 1001–1500 (one statement),
    // 1501–1600 (a group).
    const cards = await cardRows(project);
    const rowCards = cards.filter((c) => c.parent_id === project.top_level_card_id);
    const refOf = (i: number) => (i <= 1000 ? i : i + 2);
    expect(rowCards.map((c) => [c.title, c.ref, c.position])).toEqual(
      Array.from({ length: n }, (_, k) => [`Row ${k + 1}`, refOf(k + 1), k]),
    );
    const row600 = rowCards[599];
    expect(cards.filter((c) => c.parent_id === row600.id).map((c) => [c.title, c.ref, c.position])).toEqual([
      ['first', 1001, 0],
      ['second', 1002, 1],
    ]);
    const members = await db.query(
      `SELECT m.card_id::int, g.title FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id WHERE m.card_id = ANY($1::bigint[])`,
      [rowCards.map((c) => c.id)],
    );
    expect(members).toEqual([{ card_id: rowCards[1549].id, title: 'red' }]);
    const values = await db.query(
      `SELECT count(*)::int AS n FROM fields.scalar_values v JOIN cards.cards c ON c.id = v.card_id WHERE c.project_id = $1`,
      [project.id],
    );
    expect(values).toEqual([{ n }]);
    const stream = await streamRows(project);
    expect(stream.filter((e) => e.action === 'card.created')).toHaveLength(n + 2);
    expect(stream.filter((e) => e.action === 'card.attribute_changed')).toHaveLength(n);
    expect(stream.filter((e) => e.action === 'card.group_changed')).toHaveLength(1);
    if (onServer) expect(probe.log.filter((e) => e.startsWith('send'))).toHaveLength(5); // 1 + 2 levels + 1 + 1
  });
});
