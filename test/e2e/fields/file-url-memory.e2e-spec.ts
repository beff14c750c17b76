import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { UploadMemoryBudget } from '../../../src/shared/upload-memory.js';
import { startFileUrlSource, type FileUrlSource } from '../../support/file-url-source.js';
import { expectBusy, storedFileCount, until } from '../../support/held-uploads.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

const CAP = 100_000;
/** The least the budget may be: one upload at the cap and its multipart envelope. */
const BUDGET = CAP + 64 * 1024;
const HELD_BYTES = CAP;
const FILE_BYTES = 80_000;
const CHUNK = 20_000;

/**
 * "File by URL" downloads hold their bytes against the same process-wide
 * budget as uploads (UPLOAD_MEMORY_MAX_BYTES), from the first byte until the
 * request is done with them: the declared length up front, or each chunk of
 * a body of unknown length. Past it the request is a 503 with Retry-After
 * and nothing is stored; the bytes go back however the request ends.
 */
describe('upload memory budget: file by URL', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser, eve: TestUser, w: World;
  let dataDir: string;
  let budget: UploadMemoryBudget;
  let source: FileUrlSource;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-url-memory-'));
    source = await startFileUrlSource({ heldBytes: HELD_BYTES, fileBytes: FILE_BYTES, chunkBytes: CHUNK });
    ({ t, c, ann, w, users: { eve } } = await fieldsWorld({
      env: { FILE_URL_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir, MAX_UPLOAD_BYTES: String(CAP), UPLOAD_MEMORY_MAX_BYTES: String(BUDGET) },
      users: { eve: 'outsider' },
    }));
    budget = t.app.get(UploadMemoryBudget);
    await c.field(ann, w.project, 'Docs', 'files');
    await c.field(ann, w.project, 'Owners', 'members');
  });
  afterAll(async () => {
    source.releaseHeld();
    await t.close();
    await source.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const url = (route: string) => source.url(route);
  const releaseHeld = () => source.releaseHeld();
  const backToZero = () => until(() => budget.inUse === 0, 'the upload memory budget to be back to zero');
  const children = async () => (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body.length as number;
  const create = (attributes: Record<string, unknown>) =>
    t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'with files', attributes });

  it('refuses downloads, creations and uploads that would pass the budget with 503, stores nothing for them, and gives every byte back', async () => {
    const holder = (await c.card(ann, w.root, 'holder')).id;
    const other = (await c.card(ann, w.root, 'other')).id;
    const pending = c.set(ann, holder, 'Docs', [url('held')]).then((res) => res);
    await until(() => budget.inUse === HELD_BYTES, 'the held download to take its declared length');

    const before = await c.get(ann, other);
    const stored = storedFileCount(dataDir);
    const cards = await children();
    expectBusy(await c.set(ann, other, 'Docs', [url('file')]));
    expectBusy(await c.set(ann, other, 'Docs', [url('chunked')]));
    expectBusy(await create({ Docs: [url('file')] }));
    expectBusy(await t.http.post(`${API}/cards/${other}/attributes/Docs/append`).set(as(ann)).attach('value', Buffer.alloc(FILE_BYTES), 'up.bin'));
    expect(budget.inUse).toBe(HELD_BYTES);
    expect(await c.get(ann, other)).toEqual(before);
    expect(await children()).toBe(cards);
    expect(storedFileCount(dataDir)).toBe(stored);

    releaseHeld();
    const done = await pending;
    expect(done.status).toBe(200);
    expect(done.body.attributes.Docs).toEqual([expect.objectContaining({ size: HELD_BYTES })]);
    await backToZero();
    const chunked = await c.set(ann, other, 'Docs', [url('chunked')]);
    expect(chunked.body.attributes.Docs).toEqual([expect.objectContaining({ size: FILE_BYTES })]);
    await backToZero();
  });

  it('holds a new card\'s downloads until it is created', async () => {
    const creating = create({ Docs: [url('held')] }).then((res) => res);
    await until(() => budget.inUse === HELD_BYTES, 'the held download to take its declared length');
    releaseHeld();
    expect((await creating).status).toBe(201);
    await backToZero();
  });

  it('gives the bytes back when the request is refused after downloading', async () => {
    const card = (await c.card(ann, w.root, 'refusals')).id;
    const before = await c.get(ann, card);
    const stored = storedFileCount(dataDir);
    // a URL that fails after one that came in; two that pass the request's cap
    expect((await c.set(ann, card, 'Docs', [url('file'), `${source.base}/missing`])).status).toBe(400);
    await backToZero();
    expect((await c.set(ann, card, 'Docs', [url('file'), url('file')])).status).toBe(400);
    await backToZero();
    // refused in the transaction, after the download: eve is not on the team
    expect((await c.setMany(ann, card, { Docs: [url('file')], Owners: [eve.id] })).status).toBe(400);
    await backToZero();
    const cards = await children();
    expect((await create({ Docs: [url('file')], Owners: [eve.id] })).status).toBe(400);
    await backToZero();
    expect(await children()).toBe(cards);
    expect(await c.get(ann, card)).toEqual(before);
    expect(storedFileCount(dataDir)).toBe(stored);
  });
});
