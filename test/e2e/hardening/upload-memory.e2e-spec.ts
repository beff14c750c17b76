import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Metrics } from '../../../src/observability/metrics.js';
import { clientAddress, UploadMemoryBudget } from '../../../src/shared/upload-memory.js';
import { expectBusy, expectOverShare, holdUpload, listeningApp, multipartBody, storedFileCount, until, type HeldUpload } from '../../support/held-uploads.js';
import { DISCOVER } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsClient, type World } from '../fields/fields-fixtures.js';

const CAP = 100_000;
const BUDGET = 300_000;
const FILE_BYTES = 90_000;

/**
 * Uploads held in memory are bounded across requests (UPLOAD_MEMORY_MAX_BYTES),
 * not only per request (MAX_UPLOAD_BYTES): a hundred clients uploading at once
 * made the process hold gigabytes, and die of it. What would pass the budget
 * is a 503 with Retry-After, answered before its body is read, and every
 * request gives its bytes back when it ends, however it ends.
 */
describe('upload memory budget: multipart uploads', () => {
  let t: TestApp;
  let c: ReturnType<typeof fieldsClient>;
  let ann: TestUser;
  let w: World;
  let port: number;
  let dataDir: string;
  let budget: UploadMemoryBudget;
  let close: () => Promise<void>;
  const metrics = new Metrics();
  const file = Buffer.alloc(FILE_BYTES, 3);
  const upload = multipartBody('value', 'held.bin', file);
  const appendPath = (card: number) => `${API}/cards/${card}/attributes/Attachments/append`;

  beforeAll(async () => {
    // One user's uploads may hold the whole budget here: what is tested is the budget itself.
    ({ t, port, dataDir, budget, close } = await listeningApp(
      'cardwork-upload-memory-',
      { MAX_UPLOAD_BYTES: String(CAP), UPLOAD_MEMORY_MAX_BYTES: String(BUDGET), UPLOAD_MEMORY_USER_SHARE_PERCENT: '100' },
      metrics,
    ));
    c = fieldsClient(t);
    ann = await t.user();
    w = await c.world(ann);
    await c.field(ann, w.project, 'Attachments', 'files');
    await c.field(ann, w.project, 'Note', 'text');
  });
  afterAll(() => close());

  const hold = (card: number, options: { chunked?: boolean; firstBytes?: number } = {}) =>
    holdUpload(port, appendPath(card), { 'X-Api-Key': ann.apiKey }, upload, options);
  const cards = async (n: number, title: string) => Promise.all(Array.from({ length: n }, (_, i) => c.card(ann, w.root, `${title} ${i}`)));
  const attachments = async (card: number) => (await c.get(ann, card)).attributes.Attachments as unknown[];
  const backToZero = () => until(() => budget.inUse === 0, 'the upload memory budget to be back to zero');
  /** Three uploads holding their declared bytes, their bodies half sent: 270 000 and some of the 300 000. */
  const holdThree = async (): Promise<{ held: HeldUpload[]; ids: number[] }> => {
    const ids = (await cards(3, 'holder')).map((card) => card.id);
    const held = ids.map((id) => hold(id));
    await until(() => budget.inUse === 3 * upload.body.length, 'three uploads to hold their bytes');
    return { held, ids };
  };
  const finishAll = async (held: HeldUpload[]) => {
    held.forEach((h) => h.finish());
    return Promise.all(held.map((h) => h.answer));
  };

  it('refuses what would pass the budget with 503 and Retry-After before reading it, stores the others, and gives every byte back', async () => {
    const ids = (await cards(4, 'race')).map((card) => card.id);
    const stored = storedFileCount(dataDir);
    const held = ids.map((id) => hold(id));
    await until(() => held.some((h) => h.answered), 'one upload to be refused');
    expect(budget.inUse).toBe(3 * upload.body.length);
    const refused = held.findIndex((h) => h.answered);
    expectBusy(await held[refused].answer);
    const answers = await finishAll(held.filter((_, i) => i !== refused));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    await backToZero();
    expect(storedFileCount(dataDir)).toBe(stored + 3);
    expect(await Promise.all(ids.map(attachments))).toEqual(ids.map((_, i) => (i === refused ? [] : [expect.objectContaining({ size: FILE_BYTES })])));
    // once the others are done, the refused upload goes through
    await t.http.post(appendPath(ids[refused])).set(as(ann)).attach('value', file, 'again.bin').expect(200);
    await backToZero();
  });

  it('takes a body of unknown length chunk by chunk, and refuses it as soon as a chunk does not fit', async () => {
    const [alone] = await cards(1, 'chunked alone');
    const chunked = hold(alone.id, { chunked: true, firstBytes: 40_000 });
    await until(() => budget.inUse >= 40_000, 'the first chunks to be held');
    expect(budget.inUse).toBeLessThan(upload.body.length);
    chunked.finish();
    expect((await chunked.answer).status).toBe(200);
    await backToZero();

    const { held, ids } = await holdThree();
    const [late] = await cards(1, 'chunked late');
    const refused = hold(late.id, { chunked: true, firstBytes: 20_000 });
    await until(() => budget.inUse >= 3 * upload.body.length + 20_000, 'the late upload\'s first chunks to be held');
    refused.finish();
    expectBusy(await refused.answer);
    await until(() => budget.inUse === 3 * upload.body.length, 'the refused upload to give its chunks back');
    expect((await finishAll(held)).map((a) => a.status)).toEqual([200, 200, 200]);
    await backToZero();
    expect(await attachments(late.id)).toEqual([]);
    expect(await Promise.all(ids.map(attachments))).toEqual(ids.map(() => [expect.objectContaining({ size: FILE_BYTES })]));
  });

  it('holds JSON bodies too while they are read: one that would pass the budget is a 503 before it is read, signed in or not', async () => {
    const [card] = await cards(1, 'noted');
    const notePath = `${API}/cards/${card.id}/attributes/Note`;
    // Valid JSON of any size: a short value and trailing white space.
    const note = (value: string, bytes: number) => {
      const text = JSON.stringify({ value });
      return { type: 'application/json', body: Buffer.from(text + ' '.repeat(bytes - text.length)) };
    };
    const sendNote = (body: { type: string; body: Buffer }, options: { chunked?: boolean; firstBytes?: number }, key: string | null = ann.apiKey) =>
      holdUpload(port, notePath, key ? { 'X-Api-Key': key } : {}, body, options);
    const noteNow = async () => (await c.get(ann, card.id)).attributes.Note;

    // Alone, a JSON body being read counts its declared bytes until it is parsed.
    const alone = sendNote(note('alone', 40_000), { firstBytes: 100 });
    await until(() => budget.inUse === 40_000, 'the JSON body to hold its declared bytes');
    alone.finish();
    expect((await alone.answer).status).toBe(200);
    await backToZero();
    expect(await noteNow()).toBe('alone');

    const { held } = await holdThree();
    const late = sendNote(note('late', 40_000), { firstBytes: 100 });
    expectBusy(await late.answer);
    const anonymous = sendNote(note('anonymous', 40_000), { firstBytes: 100 }, null);
    expectBusy(await anonymous.answer);
    // A chunked body is refused as soon as a chunk does not fit.
    const chunked = sendNote(note('chunked', 60_000), { chunked: true, firstBytes: 35_000 });
    expectBusy(await chunked.answer);
    await until(() => budget.inUse === 3 * upload.body.length, 'the refused bodies to give their bytes back');
    // What fits goes on beside the held uploads.
    await t.http.post(notePath).set(as(ann)).send({ value: 'small' }).expect(200);
    expect((await finishAll(held)).map((a) => a.status)).toEqual([200, 200, 200]);
    await backToZero();
    expect(await noteNow()).toBe('small');
    // Once the uploads are done, the refused body goes through.
    const again = sendNote(note('again', 40_000), { firstBytes: 100 });
    again.finish();
    expect((await again.answer).status).toBe(200);
    await backToZero();
    expect(await noteNow()).toBe('again');
  });

  it('holds the text fields of a multipart form too, on a route that takes no file', async () => {
    const [card] = await cards(1, 'commented');
    const commentsPath = `${API}/cards/${card.id}/comments`;
    // A comment sent as `curl -F content=…` sends it.
    const form = (start: string, bytes: number) => {
      const boundary = 'fieldsboundary';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\n${start}`;
      const tail = `\r\n--${boundary}--\r\n`;
      return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.from(head + '.'.repeat(bytes - head.length - tail.length) + tail) };
    };
    const comments = async () => {
      const stream = (await t.http.get(`${API}/cards/${card.id}/stream`).set(as(ann)).expect(200)).body as Array<{ kind: string; content: string }>;
      return stream.filter((e) => e.kind === 'comment').map((e) => e.content.slice(0, 5));
    };

    const alone = holdUpload(port, commentsPath, { 'X-Api-Key': ann.apiKey }, form('alone', 40_000), { firstBytes: 100 });
    await until(() => budget.inUse === 40_000, 'the form to hold its declared bytes');
    alone.finish();
    expect(await alone.answer).toMatchObject({ status: 201 });
    await backToZero();

    const { held } = await holdThree();
    expectBusy(await holdUpload(port, commentsPath, { 'X-Api-Key': ann.apiKey }, form('late', 40_000), { firstBytes: 100 }).answer);
    expect((await finishAll(held)).map((a) => a.status)).toEqual([200, 200, 200]);
    await backToZero();
    expect(await comments()).toEqual(['alone']);
  });

  it("refuses a web page's form and an OAuth token request the same way, in their own forms: the HTML error page, RFC 6749 JSON", async () => {
    const form = { type: 'application/x-www-form-urlencoded', body: Buffer.from(`login=ann&password=${'x'.repeat(40_000)}`) };
    const { held } = await holdThree();
    const refused = holdUpload(port, '/login', {}, form, { firstBytes: 100 });
    const answer = await refused.answer;
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.body).toMatch(/<h1>Service Unavailable<\/h1>.*retry in 5 s/);
    const token = await holdUpload(port, '/oauth/token', {}, form, { firstBytes: 100 }).answer;
    expect(token).toMatchObject({ status: 503, headers: { 'retry-after': '5' }, body: { error: 'temporarily_unavailable' } });
    expect((await finishAll(held)).map((a) => a.status)).toEqual([200, 200, 200]);
    await backToZero();
  });

  it('gives the bytes back when the client goes away, and after a 413, a 400 or a 404', async () => {
    const [card] = await cards(1, 'endings');
    const stored = storedFileCount(dataDir);
    const gone = hold(card.id);
    await until(() => budget.inUse === upload.body.length, 'the upload to hold its bytes');
    gone.abort();
    await backToZero();

    const tooLarge = multipartBody('value', 'big.bin', Buffer.alloc(CAP + 1, 1));
    for (const options of [{}, { chunked: true }]) {
      const big = holdUpload(port, appendPath(card.id), { 'X-Api-Key': ann.apiKey }, tooLarge, options);
      big.finish();
      expect((await big.answer).status).toBe(413);
      await backToZero();
    }
    const send = (to: string, part = 'value') => t.http.post(to).set(as(ann)).attach(part, file, 'x.bin');
    expect((await send(appendPath(card.id), 'file')).status).toBe(400);
    await backToZero();
    expect((await send(`${API}/cards/${card.id}/attributes/Note`)).status).toBe(400);
    await backToZero();
    expect((await send(appendPath(999_999_999))).status).toBe(404);
    await backToZero();
    expect(await attachments(card.id)).toEqual([]);
    expect(storedFileCount(dataDir)).toBe(stored);
  });

  it('holds the importer\'s spreadsheet uploads against the same budget', async () => {
    const csv = Buffer.from(`Title\n${'row\n'.repeat(20_000)}`);
    const sheet = multipartBody('file', 'sheet.csv', csv);
    const { held } = await holdThree();
    const discover = holdUpload(port, DISCOVER, { 'X-Api-Key': ann.apiKey }, sheet);
    expectBusy(await discover.answer);
    await finishAll(held);
    await backToZero();
    const res = await t.http.post(DISCOVER).set(as(ann)).attach('file', csv, 'sheet.csv');
    expect(res.status).toBe(201);
    expect(res.body.rows).toBe(20_001);
    await backToZero();
  });

  it('shows what is held, the limit and the refusals as metrics', async () => {
    const value = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value;
    expect(await value('cardwork_upload_memory_limit_bytes')).toBe(BUDGET);
    const refusals = await value('cardwork_upload_memory_refusals_total');
    const { held } = await holdThree();
    expect(await value('cardwork_upload_memory_bytes')).toBe(3 * upload.body.length);
    const [card] = await cards(1, 'metrics');
    expectBusy(await hold(card.id).answer);
    expect(await value('cardwork_upload_memory_refusals_total')).toBe(refusals! + 1);
    await finishAll(held);
    await backToZero();
    expect(await value('cardwork_upload_memory_bytes')).toBe(0);
  });
});

/**
 * A slow upload holds its bytes for as long as its body takes, so one user's
 * dozen slow uploads held the whole budget and every other user got 503s.
 * One user's uploads together hold at most their share
 * (UPLOAD_MEMORY_USER_SHARE_PERCENT, a quarter by default), whichever of
 * their keys sends them; past it they get a 429 while the others go on.
 */
describe('upload memory budget: one user\'s share', () => {
  const SHARE_BUDGET = 800_000;
  let t: TestApp;
  let c: ReturnType<typeof fieldsClient>;
  let ann: TestUser;
  let bob: TestUser;
  let w: World;
  let port: number;
  let budget: UploadMemoryBudget;
  let close: () => Promise<void>;
  const upload = multipartBody('value', 'held.bin', Buffer.alloc(FILE_BYTES, 5));
  const appendPath = (card: number) => `${API}/cards/${card}/attributes/Attachments/append`;

  beforeAll(async () => {
    ({ t, port, budget, close } = await listeningApp('cardwork-upload-share-', { MAX_UPLOAD_BYTES: String(CAP), UPLOAD_MEMORY_MAX_BYTES: String(SHARE_BUDGET) }));
    c = fieldsClient(t);
    ann = await t.user();
    bob = await t.user();
    w = await c.world(ann);
    await c.addMember(ann, w.org, bob, 'member');
    await c.field(ann, w.project, 'Attachments', 'files');
  });
  afterAll(() => close());

  const hold = (who: TestUser | string, card: number) =>
    holdUpload(port, appendPath(card), { 'X-Api-Key': typeof who === 'string' ? who : who.apiKey }, upload);
  const card = async (title: string) => (await c.card(ann, w.root, title)).id;

  it('is a quarter of the budget by default, refused with a 429 whichever key sends it, while other users upload', async () => {
    expect(budget.perOwnerBytes).toBe(SHARE_BUDGET / 4);
    // two uploads of ann's fill her share (2 x ~90 KB of 200 KB), a third would not fit
    const held = [hold(ann, await card('ann 1')), hold(ann, await card('ann 2'))];
    await until(() => budget.inUseBy(ann.id) === 2 * upload.body.length, 'ann\'s two uploads to hold their bytes');
    const third = await card('ann 3');
    const refused = await hold(ann, third).answer;
    expectOverShare(refused);
    // another key of hers is the same user
    const otherKey = (await t.http.post(`${API}/me/api-keys`).set(as(ann)).send({ name: 'second' }).expect(201)).body.api_key as string;
    expectOverShare(await hold(otherKey, third).answer);
    // bob is not starved: his upload goes through while hers are held
    const bobs = hold(bob, await card('bob'));
    bobs.finish();
    expect((await bobs.answer).status).toBe(200);
    expect(budget.inUse).toBe(2 * upload.body.length);
    held.forEach((h) => h.finish());
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual([200, 200]);
    await until(() => budget.inUse === 0, 'the budget to be back to zero');
    expect(budget.inUseBy(ann.id)).toBe(0);
    // her share is free again
    const again = hold(ann, third);
    again.finish();
    expect((await again.answer).status).toBe(200);
    expect(((await c.get(ann, third)).attributes.Attachments as unknown[]).length).toBe(1);
  });

  it('refuses a chunked upload past the share as soon as a chunk does not fit', async () => {
    const held = [hold(ann, await card('chunk 1')), hold(ann, await card('chunk 2'))];
    await until(() => budget.inUseBy(ann.id) === 2 * upload.body.length, 'ann\'s two uploads to hold their bytes');
    const late = await card('chunked late');
    const chunked = holdUpload(port, appendPath(late), as(ann), upload, { chunked: true, firstBytes: 40_000 });
    expectOverShare(await chunked.answer);
    held.forEach((h) => h.finish());
    await Promise.all(held.map((h) => h.answer));
    await until(() => budget.inUse === 0, 'the budget to be back to zero');
    expect((await c.get(ann, late)).attributes.Attachments).toEqual([]);
  });

  it("holds a client address's bodies read before authentication to the same share, signed in or not, while other addresses go on", async () => {
    // Comments of 90 000 bytes declared and held half sent: two fill an address's share of 200 000, a third would not fit.
    const target = await card('commented');
    const comment = (text: string) => ({ type: 'application/json', body: Buffer.from(JSON.stringify({ content: text.padEnd(89_980, '.') })) });
    const send = (text: string, headers: Record<string, string>) =>
      holdUpload(port, `${API}/cards/${target}/comments`, { 'X-Api-Key': ann.apiKey, ...headers }, comment(text), { firstBytes: 100 });
    const local = clientAddress('127.0.0.1');
    const held = [send('first', {}), send('second', { 'X-Api-Key': bob.apiKey })];
    await until(() => budget.inUseBy(local) === 2 * comment('').body.length, 'two bodies from this address to hold their bytes');
    const refused = await send('third', {}).answer;
    expect(refused).toMatchObject({ status: 429, headers: { 'retry-after': '5' }, body: { type: 'RATE.CONCURRENT_BODIES' } });
    // Without a credential too: the address is known before the user is. A page's form and a token request, in their own forms.
    expect((await holdUpload(port, `${API}/cards/${target}/comments`, {}, comment('anonymous'), { firstBytes: 100 }).answer).status).toBe(429);
    const form = { type: 'application/x-www-form-urlencoded', body: Buffer.from(`login=ann&password=${'x'.repeat(89_000)}`) };
    const page = await holdUpload(port, '/login', {}, form, { firstBytes: 100 }).answer;
    expect(page).toMatchObject({ status: 429, headers: { 'retry-after': '5', 'content-type': expect.stringMatching(/^text\/html/) } });
    const token = await holdUpload(port, '/oauth/token', {}, form, { firstBytes: 100 }).answer;
    expect(token).toMatchObject({ status: 429, headers: { 'retry-after': '5' }, body: { error: 'temporarily_unavailable' } });
    // Another client, behind the same loopback proxy, is not starved.
    const other = send('other', { 'X-Forwarded-For': '203.0.113.9' });
    await until(() => budget.inUseBy(clientAddress('203.0.113.9')) > 0, 'the other address to hold its bytes');
    other.finish();
    expect((await other.answer).status).toBe(201);
    held.forEach((h) => h.finish());
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual([201, 201]);
    await until(() => budget.inUse === 0, 'the budget to be back to zero');
    const again = send('again', {});
    again.finish();
    expect((await again.answer).status).toBe(201);
    const stream = (await t.http.get(`${API}/cards/${target}/stream`).set(as(ann)).expect(200)).body as Array<{ kind: string; content: string }>;
    expect(stream.filter((e) => e.kind === 'comment').map((e) => e.content.slice(0, 6).replace(/\.+$/, '')).sort()).toEqual(['again', 'first', 'other', 'second']);
  });
});
