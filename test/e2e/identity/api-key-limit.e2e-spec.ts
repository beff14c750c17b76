import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IdentityAdminApi } from '../../../src/modules/identity/index.js';
import { sendWhileHeld } from '../../support/lock-waits.js';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';
import { itOnPostgres } from '../../support/on-postgres.js';

const KEYS = '/api/1.0/me/api-keys';
const MAX = 3;

/**
 * The rate limit counts per key (DESIGN.md §3), so a user with unlimited
 * keys had an unlimited rate: a user holds at most API_KEYS_PER_USER_MAX
 * live keys, whichever way they are created.
 */
describe('API keys per user', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { API_KEYS_PER_USER_MAX: String(MAX) } });
  });
  afterAll(() => t.close());

  const create = (u: TestUser, name = 'k') => t.http.post(KEYS).set(as(u)).send({ name });
  const live = async (u: TestUser) =>
    ((await t.http.get(KEYS).set(as(u)).expect(200)).body as Array<{ revoked_at: string | null }>).filter((k) => k.revoked_at === null).length;

  it('refuses a key past the cap with a 409 problem, and makes room when one is revoked', async () => {
    const ann = await t.user();
    const bob = await t.user();
    await create(ann).expect(201);
    const last = await create(ann).expect(201);
    const refused = await create(ann);
    expect(refused.status).toBe(409);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: 'IDENTITY.API_KEY_LIMIT', status: 409, detail: expect.stringContaining(`${MAX} API keys`) });
    expect(refused.body.error).toBe(refused.body.detail);
    expect(await live(ann)).toBe(MAX);
    // another user's keys are their own
    await create(bob).expect(201);
    // revoked keys do not count
    await t.http.delete(`${KEYS}/${last.body.id}`).set(as(ann)).expect(200);
    await create(ann).expect(201);
    await create(ann).expect(409);
  });

  itOnPostgres('counts racing creations one after the other: the cap is met exactly, with no 5xx', async () => {
    const racer = await t.user();
    // authenticated once, so the racers' authentication writes nothing (last_used_at is fresh)
    expect(await live(racer)).toBe(1);
    // Inserting keys waits until all four creations are in: each has counted by then unless it waits for the one before it.
    const answers = await sendWhileHeld(
      t.app,
      { sql: 'LOCK TABLE identity.api_keys IN SHARE MODE', params: [] },
      Array.from({ length: 4 }, (_, i) => async () => create(racer, `race ${i}`)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 409, 409]);
    expect(await live(racer)).toBe(MAX);
  });

  it('holds for keys made by the CLI (IdentityAdminApi), too', async () => {
    const admin = t.app.get(IdentityAdminApi);
    const cli = await t.user();
    await admin.createApiKey(cli.id, 'second');
    await admin.createApiKey(cli.username, 'third');
    await expect(admin.createApiKey(cli.id, 'fourth')).rejects.toMatchObject({ code: 'IDENTITY.API_KEY_LIMIT' });
    expect(await live(cli)).toBe(MAX);
  });
});
