import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { FileBlobs } from '../../../src/modules/fields/files/application/file-blobs.service.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

/**
 * A database restored without its file store (README, "Backups": a
 * PostgreSQL dump holds no file contents) serves every file as 404; the
 * start says so in a warn line, naming the first and last stored files it
 * found missing.
 */
describe('the start checks the file store against the rows', () => {
  let t: TestApp, c: FieldsClient, w: World, ann: TestUser;
  let dataDir: string;
  const ids: number[] = [];
  const warned: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-store-check-'));
    ({ t, c, ann, w } = await fieldsWorld({ env: { DATA_DIR: dataDir } }));
    await c.field(ann, w.project, 'Docs', 'files');
    const card = (await c.card(ann, w.root, 'with files')).id;
    for (const name of ['first.txt', 'middle.txt', 'last.txt']) {
      const res = await t.http
        .post(`${API}/cards/${card}/attributes/Docs/append`)
        .set(as(ann))
        .attach('value', Buffer.from(name), { filename: name, contentType: 'text/plain' })
        .expect(200);
      ids.push((res.body.attributes.Docs as Array<{ id: number }>).at(-1)!.id);
    }
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, message: unknown) {
      warned.push(String(message));
    });
  });
  afterEach(() => void warned.splice(0));
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The stored blob files (not the unsettled marks or temp files). */
  const blobs = () =>
    readdirSync(path.join(dataDir, 'files'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && !e.parentPath.includes('.unsettled'))
      .map((e) => path.join(e.parentPath, e.name));

  it('says nothing while every file is there', async () => {
    expect(blobs()).toHaveLength(3);
    await t.app.get(FileBlobs).checkStoreMatchesRows();
    expect(warned).toEqual([]);
  });

  it('names the files it finds missing when the store was copied before the last upload, or is empty', async () => {
    expect((await t.http.get(`${API}/files/${ids[2]}`).set(as(ann)).expect(200)).text).toBe('last.txt');
    // The store of a copy taken before the last upload.
    rmSync(blobs().find((file) => readFileSync(file, 'utf8') === 'last.txt')!);
    await t.app.get(FileBlobs).checkStoreMatchesRows();
    expect(warned).toEqual([
      `the file store lacks the contents of stored file(s) ${ids[2]}, and may lack more: they answer 404. Restore DATA_DIR/files from the backup taken with the database (README, "Backups")`,
    ]);
    await t.http.get(`${API}/files/${ids[2]}`).set(as(ann)).expect(404);
    warned.splice(0);
    // An empty store (a database restored alone), as the start finds it.
    for (const file of blobs()) rmSync(file);
    const fileBlobs = t.app.get(FileBlobs);
    fileBlobs.onApplicationShutdown();
    await fileBlobs.onApplicationBootstrap();
    expect(warned).toEqual([expect.stringMatching(new RegExp(`^the file store lacks the contents of stored file\\(s\\) ${ids[0]} and ${ids[2]}, `))]);
  });
});
