import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { UploadMemoryBudget } from '../../../src/shared/upload-memory.js';
import { startFileUrlSource, type FileUrlSource } from '../../support/file-url-source.js';
import { expectOverShare, holdUpload, listeningApp, multipartBody, storedFileCount, until } from '../../support/held-uploads.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsClient, type World } from './fields-fixtures.js';

const CAP = 100_000;
/** A share of 200 000 (25 %): two held downloads of 100 000 fill it, and the budget has room for far more. */
const BUDGET = 800_000;
const SHARE = BUDGET / 4;
const HELD_BYTES = CAP;
const FILE_BYTES = 80_000;

/**
 * A user's "file by URL" downloads count against their share of the upload
 * memory (UPLOAD_MEMORY_USER_SHARE_PERCENT) together with their uploads, as
 * against the whole budget: one user pointing at a slow server held up to
 * MAX_UPLOAD_BYTES a request for 30 s and crowded everyone else out. Past
 * the share their next download or upload is a 429 RATE.CONCURRENT_UPLOADS
 * that stores nothing, while another user's go through.
 */
describe('upload memory: a user\'s share takes their file-URL downloads', () => {
  let t: TestApp;
  let c: ReturnType<typeof fieldsClient>;
  let ann: TestUser;
  let eve: TestUser;
  let annWorld: World;
  let eveWorld: World;
  let dataDir: string;
  let budget: UploadMemoryBudget;
  let port: number;
  let close: () => Promise<void>;
  let source: FileUrlSource;

  beforeAll(async () => {
    source = await startFileUrlSource({ heldBytes: HELD_BYTES, fileBytes: FILE_BYTES });
    ({ t, port, dataDir, budget, close } = await listeningApp('cardwork-url-share-', {
      FILE_URL_ALLOW_PRIVATE: 'true',
      MAX_UPLOAD_BYTES: String(CAP),
      UPLOAD_MEMORY_MAX_BYTES: String(BUDGET),
    }));
    c = fieldsClient(t);
    ann = await t.user();
    eve = await t.user();
    annWorld = await c.world(ann);
    eveWorld = await c.world(eve, 'Eve Co');
    await c.field(ann, annWorld.project, 'Docs', 'files');
    await c.field(eve, eveWorld.project, 'Docs', 'files');
  });
  afterAll(async () => {
    source.releaseHeld();
    await close();
    await source.close();
  });

  const backToZero = () => until(() => budget.inUse === 0, 'the upload memory budget to be back to zero');
  // A test that fails leaves its downloads held: the next starts from an empty budget all the same.
  afterEach(async () => {
    source.releaseHeld();
    await backToZero();
  });

  const url = (route: string) => source.url(route);
  const create = (user: TestUser, w: World, attributes: Record<string, unknown>) =>
    t.http.post(`${API}/cards/${w.root}/children`).set(as(user)).send({ title: 'with files', attributes });
  const upload = (user: TestUser, card: number, bytes: number) =>
    t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(user)).attach('value', Buffer.alloc(bytes, 4), 'up.bin');
  const children = async (user: TestUser, w: World) => (await t.http.get(`${API}/cards/${w.root}/children`).set(as(user)).expect(200)).body.length as number;

  it('refuses a user\'s downloads, creations and uploads past the share her held downloads fill, with 429, while another user\'s go through', async () => {
    const first = (await c.card(ann, annWorld.root, 'first holder')).id;
    const other = (await c.card(ann, annWorld.root, 'other')).id;
    // one held download of a value set and one of a card creation fill her share
    const setting = c.set(ann, first, 'Docs', [url('held')]).then((res) => res);
    const creating = create(ann, annWorld, { Docs: [url('held')] }).then((res) => res);
    await until(() => budget.inUse === SHARE, 'her two held downloads to take their declared lengths');

    const before = await c.get(ann, other);
    const stored = storedFileCount(dataDir);
    const cards = await children(ann, annWorld);
    expectOverShare(await c.set(ann, other, 'Docs', [url('file')]));
    expectOverShare(await c.append(ann, other, 'Docs', url('file')));
    expectOverShare(await c.setMany(ann, other, { Docs: [url('file')] }));
    expectOverShare(await create(ann, annWorld, { Docs: [url('file')] }));
    expectOverShare(await upload(ann, other, FILE_BYTES));
    expect(await c.get(ann, other)).toEqual(before);
    expect(await children(ann, annWorld)).toBe(cards);
    expect(storedFileCount(dataDir)).toBe(stored);
    expect(budget.inUseBy(ann.id)).toBe(SHARE);

    // the budget has room: another user's download, creation and upload go through
    const eves = (await c.card(eve, eveWorld.root, 'eve')).id;
    expect((await c.set(eve, eves, 'Docs', [url('file')])).status).toBe(200);
    expect((await create(eve, eveWorld, { Docs: [url('file')] })).status).toBe(201);
    expect((await upload(eve, eves, FILE_BYTES)).status).toBe(200);

    source.releaseHeld();
    expect((await setting).status).toBe(200);
    expect((await creating).status).toBe(201);
    await backToZero();
    // her share is free again
    const done = await c.set(ann, other, 'Docs', [url('file')]);
    expect(done.status).toBe(200);
    expect(done.body.attributes.Docs).toEqual([expect.objectContaining({ size: FILE_BYTES })]);
    await backToZero();
  });

  it('counts her held upload and her held download together', async () => {
    const card = (await c.card(ann, annWorld.root, 'mixed')).id;
    const other = (await c.card(ann, annWorld.root, 'mixed other')).id;
    // an upload of 60 000 held half sent (its declared length taken) and a held download of 100 000: 160 000 and some of her 200 000
    const body = multipartBody('value', 'held.bin', Buffer.alloc(60_000, 5));
    const uploading = holdUpload(port, `${API}/cards/${card}/attributes/Docs/append`, { 'X-Api-Key': ann.apiKey }, body);
    await until(() => budget.inUse === body.body.length, 'her held upload to take its declared length');
    const downloading = c.set(ann, other, 'Docs', [url('held')]).then((res) => res);
    await until(() => budget.inUse === body.body.length + HELD_BYTES, 'her held download to take its declared length');

    const stored = storedFileCount(dataDir);
    // a download of 80 000 or an upload of 50 000 would pass her share, not the budget
    expectOverShare(await c.set(ann, card, 'Docs', [url('file')]));
    expectOverShare(await upload(ann, card, 50_000));
    expect(storedFileCount(dataDir)).toBe(stored);
    const eves = (await c.card(eve, eveWorld.root, 'eve mixed')).id;
    expect((await c.set(eve, eves, 'Docs', [url('file')])).status).toBe(200);

    uploading.finish();
    source.releaseHeld();
    expect((await uploading.answer).status).toBe(200);
    expect((await downloading).status).toBe(200);
    await backToZero();
  });
});
