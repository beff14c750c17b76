import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { deadlocks, deadlocksSince, sendWhileHeld } from '../../support/lock-waits.js';
import { importWorld, type ImportClient, type ImportWorld } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { type ProjectJson } from '../../support/workspace-client.js';
import { API } from './fields-fixtures.js';
import { describeOnPostgres } from '../../support/on-postgres.js';

/**
 * The importer writes its values with the bulk writers (values along a
 * creation's insert, after a context column's groups, an update's upsert).
 * A date field's option change that reaches the field first must leave no
 * value it no longer allows: the import holds the fields it fills from the
 * start of its transaction (FOR KEY SHARE, which the change's FOR UPDATE
 * conflicts with) and parses its values on the definitions it reads after
 * that hold; so the bulk writers, which otherwise hold the date fields FOR
 * SHARE and parse those values again (test/e2e/cards/bulk-values-option-
 * change.e2e-spec.ts shows them alone), are told the fields are held
 * (`fieldsHeld`) and skip that. Each test makes the change take the field's row and
 * wait (its rename meets a name held), then sends the import, which waits
 * for it: the import answers 400 and writes nothing.
 */
// Two transactions at once: the embedded database runs one at a time.
describeOnPostgres('an import meeting a date field’s option change', () => {
  let t: TestApp, ann: TestUser, ws: ImportWorld['ws'], team: number, imports: ImportClient;
  let n = 0;
  beforeAll(async () => ({ t, alice: ann, ws, team, imports } = await importWorld()));
  afterAll(() => t.close());

  const PERIOD = '2026-01-01 -> 2026-01-03';

  /** A project with a period field Span, and an import of one row into it (`extra`: more columns and body). */
  async function setUp(extra: { header?: string[]; cells?: string[]; mapping?: object; body?: object } = {}) {
    const project: ProjectJson = await ws.project(ann, team, `Race ${++n}`);
    const field = (await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Span', type: 'date', options: { period: true } }).expect(201)).body;
    const file = await imports.discover([['Title', 'Span', ...(extra.header ?? [])], ['One', PERIOD, ...(extra.cells ?? [])]]);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'date', name: 'Span' }, ...extra.mapping };
    return { project, field, body: { discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping, ...extra.body } };
  }

  /** The option change (and a rename, held until the import waits too), then the import; no deadlock. */
  async function changeThenImport(project: ProjectJson, fieldId: number, body: Record<string, unknown>) {
    const renamed = `Span ${n} renamed`;
    const hold = { sql: `INSERT INTO fields.attributes (project_id, name, type, options) VALUES ($1, $2, 'text', '{}')`, params: [project.id, renamed], end: 'rollback' as const };
    const before = await deadlocks(t.app);
    const [change, imported] = await sendWhileHeld(t.app, hold, [
      () => t.http.put(`${API}/attributes/${fieldId}`).set(as(ann)).send({ name: renamed, options: { period: false } }).then((r) => r),
      () => imports.importing(body).then((r) => r),
    ]);
    expect(await deadlocksSince(t.app, before)).toBe(0);
    expect(change.status).toBe(200);
    expect(imported.status).toBe(400);
    expect(imported.body.detail).toContain(`${renamed}: expected a date YYYY-MM-DD`);
  }

  it('refuses the values of new cards', async () => {
    const { project, field, body } = await setUp();
    await changeThenImport(project, field.id, body);
    expect(await imports.rowCards(project)).toEqual([]);
  }, 30_000);

  it('refuses the values of new cards joining a context column’s groups', async () => {
    const { project, field, body } = await setUp({ header: ['Area'], cells: ['Backend'], mapping: { '2': { type: 'context', name: 'Area' } } });
    await changeThenImport(project, field.id, body);
    expect(await imports.rowCards(project)).toEqual([]);
  }, 30_000);

  it('refuses the values of the cards an import updates', async () => {
    const { project, field, body } = await setUp({ body: { update_field: 'title' } });
    const card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: 'One' }).expect(201)).body;
    await changeThenImport(project, field.id, body);
    expect((await t.http.get(`${API}/cards/${card.id}`).set(as(ann)).expect(200)).body.attributes).toEqual({ [`Span ${n} renamed`]: null });
  }, 30_000);
});
