import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { UploadCleanup } from '../../../src/modules/import/application/upload-cleanup.service.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { DISCOVER, IMPORT, importClient } from '../../support/import-client.js';
import { workspaceClient } from '../../support/workspace-client.js';

const DAY = 24 * 3600;

/**
 * Each discover keeps the sheet's rows for 24 hours: one user's live uploads
 * are capped in number and stored bytes (IMPORT_UPLOADS_PER_USER_MAX,
 * IMPORT_UPLOAD_BYTES_PER_USER_MAX), a 429 until the first expires or the
 * user deletes one; the expired ones are deleted by the sweep.
 */
describe('discover: uploads kept per user', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await createTestApp({ env: { IMPORT_UPLOADS_PER_USER_MAX: '3', IMPORT_UPLOAD_BYTES_PER_USER_MAX: '30000' } });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  const discover = (u: TestUser, csv: string) => t.http.post(DISCOVER).set(as(u)).attach('file', Buffer.from(csv), 'sheet.csv');
  /** Text that gzip cannot shrink much: about `bytes` stored. */
  const noise = (bytes: number) => `Title\n${randomBytes(bytes).toString('base64').match(/.{1,60}/g)!.join('\n')}\n`;
  const stored = async (u: TestUser) => Number((await db.query(`SELECT count(*) AS n FROM importer.uploads WHERE user_id = $1`, [u.id]))[0].n);

  it('a user past the number of live uploads gets a 429 with Retry-After until the first expires; others and imports go on', async () => {
    const alice = await t.user();
    const bob = await t.user();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await discover(alice, `Title\nrow ${i}\n`).expect(201)).body.file_id);
    const refused = await discover(alice, 'Title\nmore\n');
    expect([refused.status, refused.body.type]).toEqual([429, 'IMPORT.UPLOAD_QUOTA']);
    expect(refused.body.detail).toMatch(/IMPORT_UPLOADS_PER_USER_MAX/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(DAY - 120);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(DAY);
    expect(await stored(alice)).toBe(3);
    await discover(bob, 'Title\nbob\n').expect(201);
    // The uploads kept still import.
    const ws = workspaceClient(t);
    const project = await ws.project(alice, await ws.team(alice));
    const mapping = { '0': { type: 'title' } };
    await t.http.post(IMPORT).set(as(alice)).send({ discover_file_id: ids[0], project_id: project.id, mapping, options: { ignore_header: true } }).expect(200);

    // One of them expired: it no longer counts, and the sweep deletes it.
    await db.query(`UPDATE importer.uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [ids[1]]);
    await discover(alice, 'Title\nafter\n').expect(201);
    expect(await stored(alice)).toBe(4);
    await expect(t.app.get(UploadCleanup).sweep()).resolves.toBeGreaterThanOrEqual(1);
    expect(await stored(alice)).toBe(3);
    expect(await db.query(`SELECT id FROM importer.uploads WHERE id = $1`, [ids[1]])).toEqual([]);
  });

  it('a user past the stored bytes gets a 429 naming the setting; rows that could never fit are a 413', async () => {
    const carol = await t.user();
    await discover(carol, noise(12_000)).expect(201);
    await discover(carol, noise(12_000)).expect(201);
    const refused = await discover(carol, noise(12_000));
    expect([refused.status, refused.body.type]).toEqual([429, 'IMPORT.UPLOAD_QUOTA']);
    expect(refused.body.detail).toMatch(/IMPORT_UPLOAD_BYTES_PER_USER_MAX/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(DAY - 120);
    expect(await stored(carol)).toBe(2);
    const dave = await t.user();
    const huge = await discover(dave, noise(40_000));
    expect(huge.status).toBe(413);
    expect(huge.body.detail).toMatch(/IMPORT_UPLOAD_BYTES_PER_USER_MAX/);
    expect(await stored(dave)).toBe(0);
  });

  it('a deleted upload frees its share at once: a user at the number or the bytes discovers again after deleting one', async () => {
    const frank = await t.user();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await discover(frank, `Title\nrow ${i}\n`).expect(201)).body.file_id);
    expect((await discover(frank, 'Title\nmore\n')).body.type).toBe('IMPORT.UPLOAD_QUOTA');
    await importClient(t, frank).deleteUpload(ids[1]).expect(200);
    await discover(frank, 'Title\nmore\n').expect(201);
    expect(await stored(frank)).toBe(3);

    const gina = await t.user();
    const first = (await discover(gina, noise(12_000)).expect(201)).body.file_id;
    await discover(gina, noise(12_000)).expect(201);
    const refused = await discover(gina, noise(12_000));
    expect([refused.status, refused.body.type]).toEqual([429, 'IMPORT.UPLOAD_QUOTA']);
    expect(refused.body.detail).toMatch(/IMPORT_UPLOAD_BYTES_PER_USER_MAX/);
    await importClient(t, gina).deleteUpload(first).expect(200);
    await discover(gina, noise(12_000)).expect(201);
    expect(await stored(gina)).toBe(2);
  });

  it('two discovers at once past the number: one of them is refused', async () => {
    const erin = await t.user();
    await discover(erin, 'Title\na\n').expect(201);
    await discover(erin, 'Title\nb\n').expect(201);
    const both = await Promise.all([discover(erin, 'Title\nc\n'), discover(erin, 'Title\nd\n')]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 429]);
    expect(await stored(erin)).toBe(3);
  });
});
