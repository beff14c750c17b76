import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { deadlocks, deadlocksSince, sendWhileHeld } from '../../support/lock-waits.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, expectRefusal, fieldsWorld, type AttributeJson, type FieldsClient, type World } from './fields-fixtures.js';
import { describeOnPostgres } from '../../support/on-postgres.js';

/**
 * A date field's `time` and `period` options decide which values it takes,
 * so narrowing them is refused while the field has values (409
 * FIELDS.FIELD_HAS_VALUES). A value write and such a change, sent at once,
 * must not both succeed: that left a period on a field without the option.
 * The option change holds the field's row FOR UPDATE before it looks for
 * values; a value write holds the rows of the date fields it writes FOR
 * SHARE and checks its values against the options it finds there. Each test
 * makes the two meet in one order every time (a third transaction holds a
 * row until both wait); each answered 200 twice, or never waited, before.
 */
// Two transactions at once: the embedded database runs one at a time.
describeOnPostgres('a date field’s options changed while a value is written', () => {
  let t: TestApp, ann: TestUser, c: FieldsClient, world: World;
  let note: AttributeJson;
  let n = 0;

  beforeAll(async () => {
    ({ t, c, ann, w: world } = await fieldsWorld());
    note = await c.field(ann, world.project, 'Note', 'text');
  });
  afterAll(() => t.close());

  const update = (id: number, body: object) => t.http.put(`${API}/attributes/${id}`).set(as(ann)).send(body).then((r) => r);
  const PERIOD = '2026-01-01 -> 2026-01-03';

  async function periodField() {
    const field = await c.field(ann, world.project, `Span ${++n}`, 'date', { period: true });
    const card = await c.card(ann, world.root, `card ${n}`);
    return { field, card: card.id };
  }

  /** The requests meet while `hold` is held; no deadlock was broken. */
  async function meet<T>(hold: Parameters<typeof sendWhileHeld>[1], sends: Array<() => Promise<T>>): Promise<T[]> {
    const before = await deadlocks(t.app);
    const answers = await sendWhileHeld(t.app, hold, sends);
    expect(await deadlocksSince(t.app, before)).toBe(0);
    return answers;
  }

  /** A transaction holding a new field named `name` (uncommitted, rolled back): a rename to it waits after its UPDATE. */
  const nameHeld = (name: string) => ({
    sql: `INSERT INTO fields.attributes (project_id, name, type, options) VALUES ($1, $2, 'text', '{}')`,
    params: [world.project, name],
    end: 'rollback' as const,
  });

  it('refuses the option change when a value was written first (one-statement set)', async () => {
    const { field, card } = await periodField();
    // The set holds the field's row, then waits for the card (held); the change waits for the set.
    const hold = { sql: `SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, params: [card] };
    const [set, change] = await meet(hold, [() => c.set(ann, card, field.name, PERIOD).then((r) => r), () => update(field.id, { options: { period: false } })]);
    expect(set.status).toBe(200);
    expect(change.status).toBe(409);
    expect(change.body.type).toContain('FIELDS.FIELD_HAS_VALUES');
    expect((await c.get(ann, card)).attributes[field.name]).toEqual({ start: '2026-01-01', end: '2026-01-03' });
    expect((await t.http.get(`${API}/attributes/${field.id}`).set(as(ann)).expect(200)).body.options).toEqual({ period: true });
  }, 30_000);

  it('refuses the option change when a value was written first (a batch in a transaction)', async () => {
    const { field, card } = await periodField();
    await c.set(ann, card, note.name, 'text').expect(200);
    // The batch (a null makes it the locking path) writes the period, then waits to clear Note (held).
    const hold = { sql: `SELECT 1 FROM fields.scalar_values WHERE card_id = $1 AND attribute_id = $2 FOR UPDATE`, params: [card, note.id] };
    const [set, change] = await meet(hold, [
      () => c.setMany(ann, card, { [field.name]: PERIOD, [note.name]: null }).then((r) => r),
      () => update(field.id, { options: { period: false } }),
    ]);
    expect(set.status).toBe(200);
    expect(change.status).toBe(409);
    expect((await c.get(ann, card)).attributes[field.name]).toEqual({ start: '2026-01-01', end: '2026-01-03' });
  }, 30_000);

  it('refuses the value when the option change came first (one-statement set)', async () => {
    const { field, card } = await periodField();
    // The change (a rename too) updates the field's row, then waits on the name held; the set waits for it.
    const renamed = `Span ${n} renamed`;
    const [change, set] = await meet(nameHeld(renamed), [
      () => update(field.id, { name: renamed, options: { period: false } }),
      () => c.set(ann, card, field.id, PERIOD).then((r) => r),
    ]);
    expect(change.status).toBe(200);
    expectRefusal(set, renamed);
    expect((await c.get(ann, card)).attributes[renamed]).toBeNull();
  }, 30_000);

  it('refuses the value when the option change came first (a batch in a transaction)', async () => {
    const field = await c.field(ann, world.project, `Stamp ${++n}`, 'date', { time: true });
    const card = (await c.card(ann, world.root, `card ${n}`)).id;
    const renamed = `Stamp ${n} renamed`;
    const [change, set] = await meet(nameHeld(renamed), [
      () => update(field.id, { name: renamed, options: {} }),
      () => c.setMany(ann, card, { attributes: { [String(field.id)]: '2026-01-01 10:00:00', [note.name]: null } }).then((r) => r),
    ]);
    expect(change.status).toBe(200);
    expectRefusal(set, renamed);
    expect((await c.get(ann, card)).attributes[renamed]).toBeNull();
  }, 30_000);
});
