import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const KEYS = '/api/1.0/me/api-keys';

interface KeyView {
  id: number;
  revoked_at: string | null;
}

/**
 * Revoked keys were never deleted: a user creating and revoking keys grew
 * `identity.api_keys` for ever. A revoked key is now listed for 30 days (its
 * name, last use and `revoked_at`), then deleted by the user's next key
 * creation, a bounded batch at a time.
 */
describe('revoked API keys: kept 30 days, then deleted', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const query = (sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> => t.app.get(DataSource).query(sql, params);
  const create = async (u: TestUser): Promise<{ id: number; key: string }> => {
    const res = await t.http.post(KEYS).set(as(u)).send({ name: 'k' }).expect(201);
    return { id: res.body.id as number, key: res.body.api_key as string };
  };
  const revoke = (u: TestUser, id: number) => t.http.delete(`${KEYS}/${id}`).set(as(u));
  /** Time travel: the key was revoked `interval` ago. */
  const revokedAgo = (id: number, interval: string) =>
    query(`UPDATE identity.api_keys SET revoked_at = now() - $2::interval WHERE id = $1`, [id, interval]);
  const listed = async (u: TestUser) => ((await t.http.get(KEYS).set(as(u)).expect(200)).body as KeyView[]).map((k) => k.id);
  const rows = async (userId: number) =>
    (await query(`SELECT id FROM identity.api_keys WHERE user_id = $1 ORDER BY id`, [userId])).map((r) => Number(r.id));

  it('lists a key revoked within 30 days and deletes one revoked longer ago on the next creation', async () => {
    const ann = await t.user();
    const [first] = await listed(ann);
    const old = await create(ann);
    const recent = await create(ann);
    await revoke(ann, old.id).expect(200);
    await revoke(ann, recent.id).expect(200);
    await revokedAgo(old.id, '30 days 1 minute');
    await revokedAgo(recent.id, '29 days 23 hours');

    // Past the retention it is gone from the listing and from revocation at once, deleted or not.
    expect(await listed(ann)).toEqual([first, recent.id]);
    const gone = await revoke(ann, old.id).expect(404);
    expect(gone.headers['content-type']).toMatch(/^application\/problem\+json/);
    await revoke(ann, recent.id).expect(200); // revoking again still answers as before
    expect(await rows(ann.id)).toEqual([first, old.id, recent.id]);

    const next = await create(ann);
    expect(await rows(ann.id)).toEqual([first, recent.id, next.id]);
    expect(await listed(ann)).toEqual([first, recent.id, next.id]);
    const [view] = ((await t.http.get(KEYS).set(as(ann)).expect(200)).body as KeyView[]).filter((k) => k.id === recent.id);
    expect(view.revoked_at).not.toBeNull();

    // Either way a revoked key authenticates nothing: 401, as an unknown key.
    for (const key of [old.key, recent.key]) {
      const res = await t.http.get('/api/1.0/me').set('X-Api-Key', key).expect(401);
      expect(res.body.detail).toBe('Invalid or revoked API key');
    }
    await t.http.get('/api/1.0/me').set('X-Api-Key', next.key).expect(200);
  });

  it("deletes only the creating user's long-revoked keys, and never a live key however old", async () => {
    const bob = await t.user();
    const cid = await t.user();
    const bobs = await create(bob);
    await revoke(bob, bobs.id).expect(200);
    await revokedAgo(bobs.id, '90 days');
    await query(`UPDATE identity.api_keys SET created_at = now() - interval '1 year' WHERE user_id = $1`, [cid.id]);
    await create(cid);
    await create(cid);
    expect(await rows(bob.id)).toContain(bobs.id);
    expect(await rows(cid.id)).toHaveLength(3);
    await create(bob);
    expect(await rows(bob.id)).not.toContain(bobs.id);
  });

  it('deletes a bounded batch per creation, oldest revocation first', async () => {
    const dan = await t.user();
    await query(
      `INSERT INTO identity.api_keys (user_id, name, prefix, key_hash, revoked_at)
       SELECT $1::bigint, 'old', 'cwk_old', 'old-' || $1::bigint || '-' || i, now() - interval '31 days' - i * interval '1 minute'
         FROM generate_series(1, 130) i`,
      [dan.id],
    );
    await create(dan);
    const left = await query(`SELECT key_hash FROM identity.api_keys WHERE user_id = $1 AND name = 'old' ORDER BY revoked_at`, [dan.id]);
    expect(left).toHaveLength(30);
    expect(left[0].key_hash).toBe(`old-${dan.id}-30`); // the 100 revoked longest ago went first
    await create(dan);
    expect(await query(`SELECT 1 FROM identity.api_keys WHERE user_id = $1 AND name = 'old'`, [dan.id])).toEqual([]);
  });
});
