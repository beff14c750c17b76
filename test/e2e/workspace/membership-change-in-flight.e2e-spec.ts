import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { deadlocks, deadlocksSince, sendWhileHeld } from '../../support/lock-waits.js';
import { importClient } from '../../support/import-client.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient, type Role } from '../../support/workspace-client.js';

/**
 * DESIGN.md §3: viewers are read-only, and a change of access takes effect
 * at once. An import re-checks its author's access in its transaction and
 * holds the membership row it relied on (FOR SHARE), so a removal or a
 * demotion to viewer sent while it runs waits for its commit, and one that
 * committed first refuses it. Before, alice's DELETE or PUT of bob answered
 * 200 at once and bob's import still wrote every row (or created its project
 * in alice's team) seconds later.
 *
 * Races need two transactions at once: PostgreSQL only (the embedded
 * database runs one transaction at a time, so there the change and the
 * import are already one after the other).
 */
const describeOnPostgres = process.env.DATABASE_URL ? describe : describe.skip;

interface Change {
  name: string;
  /** bob's role in the team before the change. */
  before: Role;
  /** bob's role after it (null: no longer a member). */
  after: Role | null;
  /** Who sends it: alice (an admin) or bob himself (leaving). */
  by: 'alice' | 'bob';
}

const CHANGES: Change[] = [
  { name: 'alice removes bob', before: 'member', after: null, by: 'alice' },
  { name: 'alice makes bob a viewer', before: 'member', after: 'viewer', by: 'alice' },
  { name: 'bob leaves the team', before: 'member', after: null, by: 'bob' },
  // An admin's removal or demotion locks the team's admin rows first.
  { name: 'alice makes bob, an admin, a viewer', before: 'admin', after: 'viewer', by: 'alice' },
];

const ROWS = 300;
type Answer = { status: number; body: Record<string, unknown> };

describeOnPostgres('a membership change while the member’s import is in flight', () => {
  let t: TestApp, db: DataSource, alice: TestUser, bob: TestUser;
  let deadlocksBefore: number;

  beforeAll(async () => {
    t = await createTestApp();
    db = t.app.get(DataSource);
    alice = await t.user();
    bob = await t.user();
    deadlocksBefore = await deadlocks(t.app);
  });
  afterAll(async () => {
    expect(await deadlocksSince(t.app, deadlocksBefore)).toBe(0);
    await t.close();
  });

  const ws = () => workspaceClient(t);
  const bobImports = () => importClient(t, bob);

  async function teamWithBob(role: Role): Promise<number> {
    const team = await ws().team(alice);
    await ws().addMember(alice, team, bob, role);
    return team;
  }

  const send = (change: Change, team: number): Promise<Answer> => {
    const url = `${API}/organizations/${team}/members/${bob.id}`;
    const actor = as(change.by === 'alice' ? alice : bob);
    const req = change.after === null ? t.http.delete(url).set(actor) : t.http.put(url).set(actor).send({ role: change.after });
    return req.then((r) => r);
  };

  const roleOfBob = async (team: number): Promise<Role | null> =>
    (await db.query(`SELECT role FROM workspace.memberships WHERE organization_id = $1 AND user_id = $2`, [team, bob.id]))[0]?.role ?? null;

  /** bob's upload of ROWS titles and the import body into `target` (project_id, or organization_id and title). */
  async function bobsImport(target: Record<string, unknown>): Promise<Record<string, unknown>> {
    const rows = Array.from({ length: ROWS }, (_, i) => [`Row ${i}`]);
    const fileId = await bobImports().discover([['Title'], ...rows]);
    return { discover_file_id: fileId, ...target, options: { ignore_header: true }, mapping: { '0': { type: 'title' } } };
  }

  const cardsUnder = async (cardId: number): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM cards.cards WHERE parent_id = $1`, [cardId]))[0].n;
  const projectsTitled = async (team: number, title: string): Promise<Array<{ id: number; top_level_card_id: number }>> =>
    db.query(`SELECT id::int, top_level_card_id::int FROM workspace.projects WHERE organization_id = $1 AND title = $2`, [team, title]);

  /** What an import refused for the change answers: 400 naming `field` when bob is out of the team, 403 for a viewer. */
  const refusal = (change: Change, field: string) =>
    change.after === null ? { status: 400, errors: [expect.objectContaining({ field })] } : { status: 403, errors: undefined };
  const refused = (res: Answer) => ({ status: res.status, errors: res.status === 400 ? res.body.errors : undefined });

  /** bob's membership row, held by another transaction: what a change and a holding write both wait for. */
  const bobsRow = (team: number) => ({
    sql: `SELECT 1 FROM workspace.memberships WHERE organization_id = $1 AND user_id = $2 FOR UPDATE`,
    params: [team, bob.id],
  });

  // sendWhileHeld: each request goes out once the ones before it wait for a
  // lock, so a change that answered at once (not waiting for the import
  // before it) fails there; the hold is let go once all of them wait.
  describe.each(CHANGES)('$name', (change) => {
    const importing = (body: Record<string, unknown>) => () => bobImports().importing(body).then((r) => r as Answer);
    const changing = (team: number) => () => send(change, team);

    it('while his import into a project waits mid-write: the change waits for it, the import writes every row, then the change answers 200', async () => {
      const team = await teamWithBob(change.before);
      const project = await ws().project(alice, team, 'Existing');
      const body = await bobsImport({ project_id: project.id });
      // The rows are the top-level card's children: the write pass locks that card, after the access check.
      const topLevelCard = { sql: `SELECT 1 FROM cards.cards WHERE id = $1 FOR UPDATE`, params: [project.top_level_card_id] };
      const [imported, changed] = await sendWhileHeld(t.app, topLevelCard, [importing(body), changing(team)]);
      expect([imported.status, imported.body]).toEqual([200, { project_id: project.id, created: ROWS, updated: 0, skipped: 0, children_created: 0 }]);
      expect(changed.status).toBe(200);
      expect(await cardsUnder(project.top_level_card_id)).toBe(ROWS);
      expect(await roleOfBob(team)).toBe(change.after);
      // The change holds from then on.
      expect(refused(await bobImports().importing(await bobsImport({ project_id: project.id })))).toEqual(refusal(change, 'project_id'));
    }, 30_000);

    it('while his import into a new project of the team waits: the change waits for it, then answers 200', async () => {
      const team = await teamWithBob(change.before);
      const body = await bobsImport({ organization_id: team, title: 'Imported' });
      // The new project's row names the team: its insert waits for the team's row, after the access check.
      const teamRow = { sql: `SELECT 1 FROM workspace.organizations WHERE id = $1 FOR UPDATE`, params: [team] };
      const [imported, changed] = await sendWhileHeld(t.app, teamRow, [importing(body), changing(team)]);
      const [project] = await projectsTitled(team, 'Imported');
      expect([imported.status, imported.body]).toEqual([200, { project_id: project.id, created: ROWS, updated: 0, skipped: 0, children_created: 0 }]);
      expect(changed.status).toBe(200);
      expect(await cardsUnder(project.top_level_card_id)).toBe(ROWS);
      expect(await roleOfBob(team)).toBe(change.after);
      expect(refused(await bobImports().importing(await bobsImport({ organization_id: team, title: 'Later' })))).toEqual(refusal(change, 'organization_id'));
    }, 30_000);

    // The change is sent first and waits for bob's row; the import's check
    // pass passes (the change is not committed yet), and its transaction
    // waits behind the change for the row. Without the hold it would not
    // wait, and would write before the change commits.
    it('committed before his import into a project holds the membership: the import is refused, nothing written', async () => {
      const team = await teamWithBob(change.before);
      const project = await ws().project(alice, team, 'Existing');
      const body = await bobsImport({ project_id: project.id });
      const [changed, imported] = await sendWhileHeld(t.app, bobsRow(team), [changing(team), importing(body)]);
      expect(changed.status).toBe(200);
      expect(refused(imported)).toEqual(refusal(change, 'project_id'));
      expect(await cardsUnder(project.top_level_card_id)).toBe(0);
    }, 30_000);

    it('committed before his import into a new project holds the membership: the import is refused, no project made', async () => {
      const team = await teamWithBob(change.before);
      const body = await bobsImport({ organization_id: team, title: 'Imported' });
      const [changed, imported] = await sendWhileHeld(t.app, bobsRow(team), [changing(team), importing(body)]);
      expect(changed.status).toBe(200);
      expect(refused(imported)).toEqual(refusal(change, 'organization_id'));
      expect(await projectsTitled(team, 'Imported')).toEqual([]);
    }, 30_000);
  });

  /**
   * The other writes that check access to a project in their transaction
   * (fields, models, group types, groups) go through the same statement
   * (WorkspaceAccess.project), so they hold the membership the same way.
   */
  describe('a field created by bob while alice makes him a viewer', () => {
    const demotion = CHANGES[1];
    const createField = (projectId: number, name: string) => () =>
      t.http.post(`${API}/projects/${projectId}/attributes`).set(as(bob)).send({ name, type: 'number' }).then((r) => r as Answer);
    const demoting = (team: number) => () => send(demotion, team);

    it('sent first: the demotion waits for the field, then answers 200', async () => {
      const team = await teamWithBob('member');
      const project = await ws().project(alice, team, 'Fields');
      // The project's field-name lock comes after the access check (FieldDefinitionsService.createField).
      const names = { sql: `SELECT pg_advisory_xact_lock(hashtextextended('fields.names:' || $1::text, 0))`, params: [project.id] };
      const [created, changed] = await sendWhileHeld(t.app, names, [createField(project.id, 'Estimate'), demoting(team)]);
      expect([created.status, changed.status]).toEqual([201, 200]);
      expect(await roleOfBob(team)).toBe('viewer');
      expect((await createField(project.id, 'Later')()).status).toBe(403);
    }, 30_000);

    it('sent after the demotion: it waits for it and is refused (403), no field made', async () => {
      const team = await teamWithBob('member');
      const project = await ws().project(alice, team, 'Fields');
      const [changed, created] = await sendWhileHeld(t.app, bobsRow(team), [demoting(team), createField(project.id, 'Estimate')]);
      expect([changed.status, created.status]).toEqual([200, 403]);
      expect(await db.query(`SELECT id FROM fields.attributes WHERE project_id = $1`, [project.id])).toEqual([]);
    }, 30_000);
  });
});
