import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PROJECT_IMPORTS_LOCK } from '../../../src/modules/import/infrastructure/project-import-lock.js';
import { untilWaitingForLocks } from '../../support/lock-waits.js';
import { importClient, type ImportClient } from '../../support/import-client.js';
import { createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient } from '../../support/workspace-client.js';

/**
 * DELETE /importers/spreadsheet/files/{fileId}: the owner deletes a
 * discovered upload before its 24 hours are over, which frees its share of
 * the upload quota at once (upload-quota.e2e-spec). Before, there was no
 * such route: a user at the quota could only wait for the first upload to
 * expire.
 */
describe('deleting a discovered upload', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await createTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const stored = async (id: number) => (await db.query(`SELECT id FROM importer.uploads WHERE id = $1`, [id])).length === 1;
  const user = async (): Promise<{ u: TestUser; imports: ImportClient }> => {
    const u = await t.user();
    return { u, imports: importClient(t, u) };
  };
  /** The answer to a DELETE that names no upload of the caller's: the same for every reason. */
  const notFound = (res: { status: number; headers: Record<string, string>; body: Record<string, unknown> }) => ({
    status: res.status,
    contentType: res.headers['content-type'],
    type: res.body.type,
    detail: res.body.detail,
  });
  const NOT_FOUND = { status: 404, contentType: expect.stringMatching(/^application\/problem\+json/), type: 'IMPORT.UPLOAD_NOT_FOUND', detail: 'Spreadsheet upload not found' };

  it('deletes the caller’s upload and its rows: 200 {id, deleted}; the file_id then imports nothing and deletes nothing', async () => {
    const { u, imports } = await user();
    const fileId = await imports.discover([['Title'], ['One']]);
    const res = await imports.deleteUpload(fileId);
    expect([res.status, res.body]).toEqual([200, { id: fileId, deleted: true }]);
    expect(await stored(fileId)).toBe(false);
    const ws = workspaceClient(t);
    const project = await ws.project(u, await ws.team(u));
    const refused = await imports.importing({ discover_file_id: fileId, project_id: project.id, mapping: { '0': { type: 'title' } } });
    expect([refused.status, refused.body.errors]).toEqual([400, [expect.objectContaining({ field: 'discover_file_id' })]]);
    expect(notFound(await imports.deleteUpload(fileId))).toEqual(NOT_FOUND);
  });

  it('answers an unknown, an expired and another user’s upload with the same 404, and deletes none of them', async () => {
    const { imports: alice } = await user();
    const { imports: bob } = await user();
    const bobs = await bob.discover([['Title'], ['Bob']]);
    const expired = await alice.discover([['Title'], ['Old']]);
    await db.query(`UPDATE importer.uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired]);
    const answers = [await alice.deleteUpload(bobs), await alice.deleteUpload(expired), await alice.deleteUpload(987654321)];
    expect(answers.map(notFound)).toEqual([NOT_FOUND, NOT_FOUND, NOT_FOUND]);
    expect([await stored(bobs), await stored(expired)]).toEqual([true, true]);
    // Bob's is still his to delete.
    expect((await bob.deleteUpload(bobs)).status).toBe(200);
    // A path that is no id (DESIGN.md §2) names nothing either.
    for (const bad of ['0', '-1', 'abc', '1e3']) expect((await alice.deleteUpload(bad)).status).toBe(404);
  });

  it('the same DELETE sent eight times at once deletes once: one 200, seven 404s', async () => {
    const { imports } = await user();
    for (let round = 0; round < 3; round++) {
      const fileId = await imports.discover([['Title'], [`Round ${round}`]]);
      const answers = await Promise.all(Array.from({ length: 8 }, () => imports.deleteUpload(fileId)));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 404, 404, 404, 404, 404, 404, 404]);
      expect(answers.filter((r) => r.status === 404).map(notFound)).toEqual(Array(7).fill(NOT_FOUND));
    }
  });

  it('is documented: 200 with {id, deleted}, and the 404 naming IMPORT.UPLOAD_NOT_FOUND', async () => {
    const doc = (await t.http.get(`${API}/spec.json`).expect(200)).body;
    const op = doc.paths[`${API}/importers/spreadsheet/files/{fileId}`].delete;
    expect(op.responses['200'].content['application/json'].schema).toMatchObject({ required: ['id', 'deleted'] });
    expect(op.responses['404'].description).toMatch(/IMPORT\.UPLOAD_NOT_FOUND: .*another user's/);
    expect(op.parameters).toEqual([expect.objectContaining({ in: 'path', name: 'fileId', schema: expect.objectContaining({ type: 'integer', minimum: 1 }) })]);
  });

  /**
   * The import reads the upload once, whole (findLive), and both its passes
   * stream the rows it read: an import that read the upload before the
   * DELETE writes every row, even when the DELETE commits between its check
   * pass and its write pass. Held at the import's first step in its
   * transaction (the project's import lock), after the check pass. On a
   * PostgreSQL server only: the embedded database's one connection cannot
   * hold a lock from the test while the import and the DELETE run.
   */
  (process.env.DATABASE_URL ? it : it.skip)('an import that read the upload before the DELETE writes all its rows; one after it is refused', async () => {
    const { u, imports } = await user();
    const ws = workspaceClient(t);
    const project = await ws.project(u, await ws.team(u));
    const rows = Array.from({ length: 1_200 }, (_, i) => [`Card ${i}`]);
    const fileId = await imports.discover([['Title'], ...rows]);
    const body = { discover_file_id: fileId, project_id: project.id, options: { ignore_header: true }, mapping: { '0': { type: 'title' } } };
    const blocker = db.createQueryRunner();
    await blocker.connect();
    let importing: Promise<{ status: number; body: Record<string, unknown> }>;
    try {
      await blocker.startTransaction();
      await blocker.query(`SELECT pg_advisory_xact_lock($1::int, $2::int)`, [PROJECT_IMPORTS_LOCK, project.id]);
      importing = imports.importing(body).then((r) => r);
      await untilWaitingForLocks(t.app, 1);
      await imports.deleteUpload(fileId).expect(200);
      expect(await stored(fileId)).toBe(false);
    } finally {
      await blocker.commitTransaction().catch(() => undefined);
      await blocker.release();
    }
    const done = await importing!;
    expect([done.status, done.body]).toEqual([200, { project_id: project.id, created: 1_200, updated: 0, skipped: 0, children_created: 0 }]);
    const [cards] = await db.query(
      `SELECT count(*)::int AS n, count(DISTINCT title)::int AS titles FROM cards.cards WHERE parent_id = $1 AND title LIKE 'Card %'`,
      [project.top_level_card_id],
    );
    expect(cards).toEqual({ n: 1_200, titles: 1_200 });
    const after = await imports.importing(body);
    expect([after.status, after.body.errors]).toEqual([400, [expect.objectContaining({ field: 'discover_file_id' })]]);
  });
});
