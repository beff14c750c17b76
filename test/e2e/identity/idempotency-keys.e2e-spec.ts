import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner.js';
import { CreateCardsService } from '../../../src/modules/cards/application/create-cards.service.js';
import { IdempotencyKeysStore, MAX_KEPT_ANSWER_BYTES, MAX_KEPT_BYTES_PER_USER } from '../../../src/modules/identity/infrastructure/idempotency-keys.store.js';
import { requestStatements } from '../../support/request-statements.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, workspaceClient, type ProjectJson } from '../../support/workspace-client.js';

// `Idempotency-Key` on the API's POSTs (IdempotencyKeyGuard; README, docs/RELIABILITY.md).
// Runs on PostgreSQL with DATABASE_URL, on the embedded PGlite database without.

describe('Idempotency-Key on POST', () => {
  let t: TestApp;
  let db: DataSource;
  let ann: TestUser;
  let bob: TestUser;
  let project: ProjectJson;
  let keys = 0;
  /** A key no other test used. */
  const freshKey = () => `key-${++keys}-${Math.random().toString(36).slice(2)}`;

  const create = (u: TestUser, body: object, key?: string, parent = project.top_level_card_id) => {
    const req = t.http.post(`${API}/cards/${parent}/children`).set(as(u));
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const cardsTitled = async (title: string): Promise<number> =>
    Number((await db.query(`SELECT count(*) AS n FROM cards.cards WHERE title = $1`, [title]))[0].n);
  const keyRows = async (u: TestUser, key: string): Promise<Array<{ status: number | null; body: unknown }>> =>
    db.query(`SELECT status, body FROM identity.idempotency_keys WHERE user_id = $1 AND key = $2`, [u.id, key]);

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    db = t.app.get(DataSource);
    ann = await t.user();
    bob = await t.user();
    const ws = workspaceClient(t);
    const org = await ws.team(ann);
    await ws.addMember(ann, org, bob, 'member');
    project = await ws.project(ann, org);
  });
  afterAll(() => t.close());

  it('replays a retried creation: the same 201, Location and body, marked, and one card', async () => {
    const key = freshKey();
    const first = await create(ann, { title: 'retried' }, key).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create(ann, { title: 'retried' }, key).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.text).toBe(first.text);
    expect(await cardsTitled('retried')).toBe(1);
  });

  it('takes the key on the API path in any case, as Express routes it: /API/1.0 replays too', async () => {
    const key = freshKey();
    const post = () => t.http.post(`/API/1.0/cards/${project.top_level_card_id}/children`).set(as(ann)).set('Idempotency-Key', key).send({ title: 'upper path' });
    const first = await post().expect(201);
    const again = await post().expect(201);
    expect([again.headers['idempotent-replayed'], again.body.id]).toEqual(['true', first.body.id]);
    expect(await cardsTitled('upper path')).toBe(1);
  });

  it("keeps no more answers per user than MAX_KEPT_BYTES_PER_USER: past it, a success is kept as done, without its body", async () => {
    const quota = MAX_KEPT_BYTES_PER_USER;
    // Bob's answers of the day fill his share but for a few bytes (a client that stored big answers and left).
    await db.query(
      `INSERT INTO identity.idempotency_keys (user_id, key, fingerprint, claim, created_at, status, content_type, body)
       VALUES ($1, 'filler', 'f', gen_random_uuid(), clock_timestamp(), 201, 'application/json', convert_to(repeat('x', $2), 'UTF8'))`,
      [bob.id, quota - 100],
    );
    const key = freshKey();
    const first = await create(bob, { title: 'over the share' }, key).expect(201);
    const again = await create(bob, { title: 'over the share' }, key);
    expect([again.status, again.body.type, again.body.detail]).toEqual([409, 'REQUEST.ANSWER_NOT_KEPT', expect.stringContaining('read the resource it made')]);
    expect((await keyRows(bob, key)).map((r) => [r.status, r.body])).toEqual([[201, null]]);
    expect(await cardsTitled('over the share')).toBe(1);
    expect(first.body.id).toEqual(expect.any(Number));
    // Another user's answers are kept as ever; and bob's own once the filler is past its day.
    const annKey = freshKey();
    await create(ann, { title: 'ann within hers' }, annKey).expect(201);
    expect((await create(ann, { title: 'ann within hers' }, annKey)).headers['idempotent-replayed']).toBe('true');
    await db.query(`UPDATE identity.idempotency_keys SET created_at = created_at - interval '25 hours' WHERE user_id = $1 AND key = 'filler'`, [bob.id]);
    const later = freshKey();
    await create(bob, { title: 'bob later' }, later).expect(201);
    expect((await create(bob, { title: 'bob later' }, later)).headers['idempotent-replayed']).toBe('true');
  });

  it('keeps an answer of up to MAX_KEPT_ANSWER_BYTES (1 MiB) for replay; a larger one as done, without its body (409 REQUEST.ANSWER_NOT_KEPT)', async () => {
    expect(MAX_KEPT_ANSWER_BYTES).toBe(1024 * 1024);
    // A card whose answer is near 1 MiB: two content values of 100 000 four-byte characters, and a third set under a key.
    const ws = workspaceClient(t);
    const big = await ws.project(ann, await ws.team(ann, 'Big answers'));
    for (const name of ['One', 'Two', 'Three']) await t.http.post(`${API}/projects/${big.id}/attributes`).set(as(ann)).send({ name, type: 'content' }).expect(201);
    const card = (await create(ann, { title: 'big answer' }, undefined, big.top_level_card_id).expect(201)).body.id;
    const emoji = (n: number) => '\u{1F600}'.repeat(n);
    const set = (value: string, key?: string) => {
      const req = t.http.post(`${API}/cards/${card}/attributes/Three`).set(as(ann));
      return (key === undefined ? req : req.set('Idempotency-Key', key)).send({ value });
    };
    for (const name of ['One', 'Two']) await t.http.post(`${API}/cards/${card}/attributes/${name}`).set(as(ann)).send({ value: emoji(100_000) }).expect(200);
    // The answer with Three = 'a', in bytes; each emoji in place of the 'a' adds 4 less the 'a'.
    const base = Buffer.byteLength((await set('a').expect(200)).text);
    const under = Math.floor((MAX_KEPT_ANSWER_BYTES - base + 1) / 4);
    const sizeWith = (n: number) => base - 1 + 4 * n;
    expect([sizeWith(under) <= MAX_KEPT_ANSWER_BYTES, sizeWith(under + 1) > MAX_KEPT_ANSWER_BYTES]).toEqual([true, true]);

    const kept = freshKey();
    const first = await set(emoji(under), kept).expect(200);
    expect(Buffer.byteLength(first.text)).toBe(sizeWith(under));
    const replayed = await set(emoji(under), kept).expect(200);
    expect([replayed.headers['idempotent-replayed'], replayed.text === first.text]).toEqual(['true', true]);

    const notKept = freshKey();
    const larger = await set(emoji(under + 1), notKept).expect(200);
    expect(Buffer.byteLength(larger.text)).toBe(sizeWith(under + 1));
    expect((await keyRows(ann, notKept)).map((r) => [r.status, r.body])).toEqual([[200, null]]);
    const retry = await set(emoji(under + 1), notKept);
    expect([retry.status, retry.body.type, retry.headers['idempotent-replayed']]).toEqual([409, 'REQUEST.ANSWER_NOT_KEPT', undefined]);
  });

  it('sweeps expired keys, oldest first, at most 1000 at a time, on one claim in 100; a swept key is a fresh one', async () => {
    const cal = await t.user();
    const ws = workspaceClient(t);
    const own = (await ws.project(cal, await ws.team(cal, 'Sweeps'))).top_level_card_id;
    const rowsOf = async (): Promise<string[]> =>
      (await db.query(`SELECT key FROM identity.idempotency_keys WHERE user_id = $1 ORDER BY created_at`, [cal.id])).map((r: { key: string }) => r.key);
    // 1 200 keys a month old (older than any other expired key here), the newest first in the name's order, and one of today.
    await db.query(
      `INSERT INTO identity.idempotency_keys (user_id, key, fingerprint, claim, created_at, status, content_type, body)
       SELECT $1, 'old-' || lpad(n::text, 4, '0'), 'f', gen_random_uuid(), clock_timestamp() - interval '30 days' - n * interval '1 second', 201, 'application/json', '\\x7b7d'::bytea
         FROM generate_series(1, 1200) AS n`,
      [cal.id],
    );
    await db.query(
      `INSERT INTO identity.idempotency_keys (user_id, key, fingerprint, claim, created_at, status) VALUES ($1, 'today', 'f', gen_random_uuid(), clock_timestamp(), 201)`,
      [cal.id],
    );
    const oldest = (n: number) => Array.from({ length: n }, (_, i) => `old-${String(1200 - i).padStart(4, '0')}`);
    expect(await rowsOf()).toEqual([...oldest(1200), 'today']);

    /** A keyed creation whose claim draws a sweep (Math.random below 1 in 100), and the sweep's end. */
    const claimWithSweep = async (title: string, key: string) => {
      const before = (await rowsOf()).length;
      const random = jest.spyOn(Math, 'random').mockReturnValue(0);
      try {
        await create(cal, { title }, key, own).expect(201);
      } finally {
        random.mockRestore();
      }
      for (let waited = 0; (await rowsOf()).length >= before && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    // A claim that draws no sweep deletes nothing.
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.5);
    try {
      await create(cal, { title: 'no sweep' }, 'no-sweep', own).expect(201);
    } finally {
      random.mockRestore();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rowsOf()).toHaveLength(1202);

    await claimWithSweep('first sweep', 'sweep-1');
    expect(await rowsOf()).toEqual([...oldest(1200).slice(1000), 'today', 'no-sweep', 'sweep-1']);
    await claimWithSweep('second sweep', 'sweep-2');
    expect(await rowsOf()).toEqual(['today', 'no-sweep', 'sweep-1', 'sweep-2']);

    // A swept key runs its request afresh, and is then kept again.
    await create(cal, { title: 'swept key' }, 'old-0001', own).expect(201).expect((res) => expect(res.headers['idempotent-replayed']).toBeUndefined());
    await create(cal, { title: 'swept key' }, 'old-0001', own).expect(201).expect('Idempotent-Replayed', 'true');
    expect(await cardsTitled('swept key')).toBe(1);
  });

  it("keeps the answer before its last bytes go out: a retry sent as soon as it arrived replays it", async () => {
    // The answer's storing made slow: the answer waits for it.
    const complete = IdempotencyKeysStore.prototype.complete;
    const slow = jest.spyOn(IdempotencyKeysStore.prototype, 'complete').mockImplementation(async function (this: IdempotencyKeysStore, ...args) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return complete.apply(this, args);
    });
    try {
      const key = freshKey();
      const first = await create(ann, { title: 'held answer' }, key).expect(201);
      const again = await create(ann, { title: 'held answer' }, key);
      expect([again.status, again.headers['idempotent-replayed'], again.body.id]).toEqual([201, 'true', first.body.id]);
    } finally {
      slow.mockRestore();
    }
  });

  it('runs a keyed request to its end when its client leaves, so that the retry gets its answer', async () => {
    // The client gives up while the creation waits (after the key's claim, before any of the card's statements).
    const original = CreateCardsService.prototype.create;
    const slow = jest.spyOn(CreateCardsService.prototype, 'create').mockImplementation(async function (this: CreateCardsService, ...args) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return original.apply(this, args);
    });
    const key = freshKey();
    try {
      await expect(create(ann, { title: 'client left' }, key).timeout(100)).rejects.toThrow(/Timeout/);
      for (let waited = 0; (await keyRows(ann, key))[0]?.status !== 201 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      slow.mockRestore();
    }
    const again = await create(ann, { title: 'client left' }, key).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await cardsTitled('client left')).toBe(1);
  });

  it('refuses the same key with another body (422) and creates nothing', async () => {
    const key = freshKey();
    await create(ann, { title: 'first body' }, key).expect(201);
    const other = await create(ann, { title: 'second body' }, key);
    expect([other.status, other.headers['content-type'], other.body.type, other.body.errors?.[0]?.field]).toEqual([
      422,
      expect.stringMatching(/^application\/problem\+json/),
      'INPUT.IDEMPOTENCY_KEY_REUSED',
      'Idempotency-Key',
    ]);
    expect(await cardsTitled('second body')).toBe(0);
    // Another path with the same key and body is another request too.
    const elsewhere = await create(ann, { title: 'first body' }, key, (await create(ann, { title: 'a parent' }).expect(201)).body.id);
    expect([elsewhere.status, elsewhere.body.type]).toEqual([422, 'INPUT.IDEMPOTENCY_KEY_REUSED']);
    expect(await cardsTitled('first body')).toBe(1);
  });

  it("keeps each user's keys apart: another user's equal key is its own request", async () => {
    const key = freshKey();
    const anns = await create(ann, { title: 'same key, two users' }, key).expect(201);
    const bobs = await create(bob, { title: 'same key, two users' }, key).expect(201);
    expect(bobs.headers['idempotent-replayed']).toBeUndefined();
    expect(bobs.body.id).not.toBe(anns.body.id);
    // Each one's retry gets its own answer back.
    for (const [u, first] of [[ann, anns], [bob, bobs]] as const) {
      const again = await create(u, { title: 'same key, two users' }, key).expect(201);
      expect([again.headers['idempotent-replayed'], again.body.id]).toEqual(['true', first.body.id]);
    }
    expect(await cardsTitled('same key, two users')).toBe(2);
  });

  it('lets the key go when the first answer is not a success: the corrected request runs', async () => {
    const key = freshKey();
    const refused = await create(ann, { title: 'corrected', position: 'first' }, key);
    expect(refused.status).toBe(400);
    expect(await keyRows(ann, key)).toEqual([]);
    const corrected = await create(ann, { title: 'corrected' }, key).expect(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    // The key is now the corrected request's.
    await create(ann, { title: 'corrected' }, key).expect(201).expect('Idempotent-Replayed', 'true');
    expect(await cardsTitled('corrected')).toBe(1);
  });

  it('runs two identical requests sent at once once: each answers the 201 (same card) or 409 REQUEST.IN_PROGRESS', async () => {
    for (let round = 0; round < 3; round++) {
      const key = freshKey();
      const title = `at once ${round}`;
      const answers = await Promise.all([create(ann, { title }, key), create(ann, { title }, key)]);
      const created = answers.filter((res) => res.status === 201);
      const busy = answers.filter((res) => res.status === 409);
      expect(created.length + busy.length).toBe(2);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((res) => res.body.id)).size).toBe(1);
      for (const res of busy) expect([res.body.type, res.headers['retry-after']]).toEqual(['REQUEST.IN_PROGRESS', '1']);
      expect(await cardsTitled(title)).toBe(1);
    }
  });

  it('answers 409 REQUEST.IN_PROGRESS while the first request runs, and takes over a claim running for over 15 minutes', async () => {
    const key = freshKey();
    await create(ann, { title: 'stale claim' }, key).expect(201);
    // As if the first request were still running (its server died before it answered).
    await db.query(`UPDATE identity.idempotency_keys SET status = NULL, body = NULL WHERE user_id = $1 AND key = $2`, [ann.id, key]);
    const running = await create(ann, { title: 'stale claim' }, key);
    expect([running.status, running.body.type, running.headers['retry-after']]).toEqual([409, 'REQUEST.IN_PROGRESS', '1']);
    expect(running.body.detail).toMatch(/^The first request with this Idempotency-Key has been running for \d+ s; .* taken over in \d+ s and the retry then runs it again$/);
    // Running for 14 minutes 50 seconds: the retry is told to wait for the takeover (a crash's claim), not to ask every second.
    await db.query(`UPDATE identity.idempotency_keys SET created_at = created_at - interval '14 minutes 50 seconds' WHERE user_id = $1 AND key = $2`, [ann.id, key]);
    const long = await create(ann, { title: 'stale claim' }, key);
    expect([long.status, Number(long.headers['retry-after']) >= 5 && Number(long.headers['retry-after']) <= 11]).toEqual([409, true]);
    expect(long.body.detail).toMatch(/has been running for 89\d s; .* taken over in (\d|1[01]) s/);
    await db.query(`UPDATE identity.idempotency_keys SET created_at = created_at - interval '70 seconds' WHERE user_id = $1 AND key = $2`, [ann.id, key]);
    const retaken = await create(ann, { title: 'stale claim' }, key).expect(201);
    expect(retaken.headers['idempotent-replayed']).toBeUndefined();
    expect(await cardsTitled('stale claim')).toBe(2);
    const replayed = await create(ann, { title: 'stale claim' }, key).expect(201);
    expect([replayed.headers['idempotent-replayed'], replayed.body.id]).toEqual(['true', retaken.body.id]);
  });

  it('runs a request again once its key is over 24 hours old', async () => {
    const key = freshKey();
    await create(ann, { title: 'expired key' }, key).expect(201);
    await db.query(`UPDATE identity.idempotency_keys SET created_at = created_at - interval '24 hours 1 minute' WHERE user_id = $1 AND key = $2`, [ann.id, key]);
    const afresh = await create(ann, { title: 'expired key' }, key).expect(201);
    expect(afresh.headers['idempotent-replayed']).toBeUndefined();
    expect(await cardsTitled('expired key')).toBe(2);
    // Its new first use starts its 24 hours again.
    await create(ann, { title: 'expired key' }, key).expect(201).expect('Idempotent-Replayed', 'true');
    expect(await cardsTitled('expired key')).toBe(2);
  });

  it('refuses the header on a multipart body (400), storing and creating nothing', async () => {
    const key = freshKey();
    const form = await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).set('Idempotency-Key', key).field('title', 'multipart');
    expect([form.status, form.body.type, form.body.errors?.[0]?.field]).toEqual([400, 'INPUT.INVALID', 'Idempotency-Key']);
    expect(form.body.detail).toMatch(/multipart/);
    const upload = await t.http
      .post(`${API}/importers/spreadsheet/discover`)
      .set(as(ann))
      .set('Idempotency-Key', key)
      .attach('file', Buffer.from('title\nOne\n'), 'rows.csv');
    expect([upload.status, upload.body.type, upload.body.errors?.[0]?.field]).toEqual([400, 'INPUT.INVALID', 'Idempotency-Key']);
    expect(await keyRows(ann, key)).toEqual([]);
    expect(await cardsTitled('multipart')).toBe(0);
  });

  it('refuses a header that is not 1 to 255 visible ASCII characters (400 naming it); only after authentication', async () => {
    for (const bad of ['', ' ', 'two words', 'x'.repeat(256), 'caf\u00e9']) {
      const res = await create(ann, { title: 'bad key' }, bad);
      expect({ bad, status: res.status, type: res.body.type, field: res.body.errors?.[0]?.field }).toEqual({ bad, status: 400, type: 'INPUT.INVALID', field: 'Idempotency-Key' });
    }
    expect(await cardsTitled('bad key')).toBe(0);
    await create(ann, { title: 'longest key' }, '!'.repeat(254) + '~').expect(201);
    const anonymous = await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set('Idempotency-Key', 'two words').send({ title: 'x' });
    expect([anonymous.status, anonymous.body.type]).toEqual([401, 'AUTH.UNAUTHORIZED']);
  });

  it('leaves other methods alone: a PUT takes any header, and keeps no key', async () => {
    const card = (await create(ann, { title: 'put me' }).expect(201)).body;
    const key = freshKey();
    await create(ann, { title: 'put me' }, 'two words').expect(400);
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).set('Idempotency-Key', 'two words').send({ title: 'put once' }).expect(200);
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).set('Idempotency-Key', key).send({ title: 'put twice' }).expect(200);
    await t.http.put(`${API}/cards/${card.id}`).set(as(ann)).set('Idempotency-Key', key).send({ title: 'put thrice' }).expect(200).expect((res) => expect(res.headers['idempotent-replayed']).toBeUndefined());
    expect(await db.query(`SELECT 1 FROM identity.idempotency_keys WHERE key = $1`, [key])).toEqual([]);
  });

  it('keeps no answer holding a secret: a new API key is not replayed (409 REQUEST.ANSWER_NOT_KEPT) nor stored', async () => {
    const key = freshKey();
    const made = await t.http.post(`${API}/me/api-keys`).set(as(bob)).set('Idempotency-Key', key).send({ name: 'once' }).expect(201);
    expect(made.body.api_key).toEqual(expect.any(String));
    expect(await keyRows(bob, key)).toEqual([{ status: 201, body: null }]);
    const again = await t.http.post(`${API}/me/api-keys`).set(as(bob)).set('Idempotency-Key', key).send({ name: 'once' });
    expect([again.status, again.body.type, again.text.includes(made.body.api_key)]).toEqual([409, 'REQUEST.ANSWER_NOT_KEPT', false]);
    const listed = (await t.http.get(`${API}/me/api-keys`).set(as(bob)).expect(200)).body as Array<{ name: string }>;
    expect(listed.filter((k) => k.name === 'once')).toHaveLength(1);
  });

  it('costs a request without the header no statement; one with it, its claim and the kept answer', async () => {
    /** The statements of one creation, as requestStatements names them, and the texts of those on the keys' table. */
    const statements = async (key?: string) => {
      const sent = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        await create(ann, { title: 'counted' }, key).expect(201);
        // Not counted: the key's last-used time (once a minute of use), and the keys' sweep (one claim in 100).
        const counted = sent.mock.calls.filter(([text]) => !/\blast_used_at\b/.test(String(text)) && !/^\s*DELETE FROM identity\.idempotency_keys WHERE created_at/.test(String(text)));
        const onKeys = counted.map(([text]) => String(text).trim()).filter((text) => text.includes('identity.idempotency_keys'));
        return { all: requestStatements(counted), onKeys: onKeys.map((text) => text.split(/\s+/)[0]) };
      } finally {
        sent.mockRestore();
      }
    };
    const without = await statements();
    const withKey = await statements(freshKey());
    expect(without.onKeys).toEqual([]);
    expect(withKey.onKeys).toEqual(['INSERT', 'UPDATE']);
    expect(withKey.all.length - without.all.length).toBe(2);
  });
});
