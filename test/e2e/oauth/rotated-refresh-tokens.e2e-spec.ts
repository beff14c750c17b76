import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type QueryRunner } from 'typeorm';
import { IdentityOAuthRotatedRefreshTokens1795650000000 } from '../../../migrations/1795650000000-identity-oauth-rotated-refresh-tokens.js';
import { IdentityOAuthRotatedRefreshExpiry1795680000000 } from '../../../migrations/1795680000000-identity-oauth-rotated-refresh-expiry.js';
import { tokenRequest, webUser, type RegisteredApp, type WebUser } from '../../support/oauth-client.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const CALLBACK = 'https://app.example.test/callback';
const API = '/api/1.0';

interface TokenPair {
  access_token: string;
  refresh_token: string;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

// Every refresh used to leave the superseded pair's whole row behind for as
// long as the authorization lived (reuse detection needs to know its refresh
// token). Now only that token's hash stays; the row goes once the next pair
// is stored.
describe('OAuth: superseded token pairs keep only what reuse detection reads', () => {
  let t: TestApp;
  let ann: WebUser;
  let app: RegisteredApp;

  const query = (sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> => t.app.get(DataSource).query(sql, params);
  const basic = () => ({ id: app.clientId, secret: app.clientSecret! });
  const refresh = (refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken }, basic());
  const me = (accessToken: string) => t.http.get(`${API}/me`).set('Authorization', `Bearer ${accessToken}`);
  const revoke = (token: string) => t.http.post('/oauth/revoke').type('form').auth(app.clientId, app.clientSecret!).send({ token });

  /** An authorization refreshed `times` times: every pair it was given, oldest first, and its grant. */
  async function refreshed(times: number): Promise<{ grantId: number; pairs: TokenPair[] }> {
    const code = await ann.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'read_user' });
    const pairs = [(await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK }, basic()).expect(200)).body as TokenPair];
    for (let i = 0; i < times; i++) pairs.push((await refresh(pairs[pairs.length - 1].refresh_token).expect(200)).body as TokenPair);
    const [row] = await query(`SELECT grant_id FROM identity.oauth_tokens WHERE refresh_token_hash = $1`, [sha256(pairs[pairs.length - 1].refresh_token)]);
    return { grantId: Number(row.grant_id), pairs };
  }
  const tokenRows = async (grantId: number) =>
    (await query(`SELECT refresh_token_hash FROM identity.oauth_tokens WHERE grant_id = $1 ORDER BY id`, [grantId])).map((r) => r.refresh_token_hash);
  const rotatedHashes = async (grantId: number) =>
    (await query(`SELECT refresh_token_hash FROM identity.oauth_rotated_refresh_tokens WHERE grant_id = $1`, [grantId])).map((r) => r.refresh_token_hash).sort();

  beforeAll(async () => {
    t = await createTestApp();
    ann = webUser(t);
    await ann.signUp('ann');
    app = await ann.registerApp([CALLBACK]);
  });
  afterAll(() => t.close());

  it('keeps one token row per authorization however often it is refreshed, and each rotated refresh token as a hash', async () => {
    const { grantId, pairs } = await refreshed(4);
    const current = pairs[4];
    expect(await tokenRows(grantId)).toEqual([sha256(current.refresh_token)]);
    expect(await rotatedHashes(grantId)).toEqual(pairs.slice(0, 4).map((p) => sha256(p.refresh_token)).sort());
    await me(current.access_token).expect(200);
    for (const old of pairs.slice(0, 4)) await me(old.access_token).expect(401);
  });

  it.each([0, 2])('still ends the authorization when rotated refresh token %i is presented again', async (which) => {
    const { grantId, pairs } = await refreshed(3);
    const reuse = await refresh(pairs[which].refresh_token).expect(400);
    expect(reuse.body.error).toBe('invalid_grant');
    await me(pairs[3].access_token).expect(401);
    expect((await refresh(pairs[3].refresh_token).expect(400)).body.error).toBe('invalid_grant');
    // An ended authorization's rows stay until it is cleaned up with them.
    expect(await rotatedHashes(grantId)).toHaveLength(3);
  });

  it('ends the authorization when the client revokes a rotated refresh token (RFC 7009)', async () => {
    const { pairs } = await refreshed(2);
    await revoke(pairs[0].refresh_token).expect(200);
    await me(pairs[2].access_token).expect(401);
  });

  it('deletes the rotated hashes with their authorization', async () => {
    const { grantId, pairs } = await refreshed(2);
    await revoke(pairs[2].refresh_token).expect(200);
    await query(`UPDATE identity.oauth_tokens SET revoked_at = revoked_at - interval '25 hours' WHERE grant_id = $1`, [grantId]);
    await query(`UPDATE identity.oauth_codes SET expires_at = expires_at - interval '2 days' WHERE id = $1`, [grantId]);
    await ann.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'read_user' }); // storing a code cleans up
    expect(await tokenRows(grantId)).toEqual([]);
    expect(await rotatedHashes(grantId)).toEqual([]);
  });

  // A rotated refresh token could not be exchanged past the lifetime it had
  // as a refresh token (30 days), so its hash goes then: a client that keeps
  // refreshing and is never revoked keeps its last 30 days' hashes, not every
  // one. Presented after that, it is an unknown token: invalid_grant, never
  // accepted, and the authorization goes on (as for an expired refresh token),
  // whether or not the clean-up has deleted its hash yet.
  describe('past their lifetime', () => {
    /** Time travel: the rotated refresh token's lifetime ends `offset` from now (negative: it has passed). */
    const endsIn = (refreshToken: string, offset: string) =>
      query(`UPDATE identity.oauth_rotated_refresh_tokens SET expires_at = now() + $2::interval WHERE refresh_token_hash = $1`, [
        sha256(refreshToken),
        offset,
      ]);
    const cleanUp = () => ann.code({ response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'read_user' });

    it('each rotated refresh token keeps the end of the lifetime it had as a refresh token', async () => {
      const first = await refreshed(0);
      const [issued] = await query(`SELECT refresh_expires_at FROM identity.oauth_tokens WHERE grant_id = $1`, [first.grantId]);
      await refresh(first.pairs[0].refresh_token).expect(200);
      const [rotated] = await query(`SELECT expires_at FROM identity.oauth_rotated_refresh_tokens WHERE grant_id = $1`, [first.grantId]);
      expect(new Date(rotated.expires_at as string).getTime()).toBe(new Date(issued.refresh_expires_at as string).getTime());
      const days = (new Date(rotated.expires_at as string).getTime() - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(29.99);
      expect(days).toBeLessThanOrEqual(30);
    });

    it('deletes those past it when a code is stored, and keeps those within it', async () => {
      const { grantId, pairs } = await refreshed(3);
      await endsIn(pairs[0].refresh_token, '-1 second');
      await endsIn(pairs[1].refresh_token, '1 hour');
      await cleanUp();
      expect(await rotatedHashes(grantId)).toEqual([pairs[1], pairs[2]].map((p) => sha256(p.refresh_token)).sort());
      await me(pairs[3].access_token).expect(200);
    });

    it('deletes those past it on a refresh too (each refresh adds one), however long no code is stored', async () => {
      const { grantId, pairs } = await refreshed(2);
      await endsIn(pairs[0].refresh_token, '-1 day');
      const next = (await refresh(pairs[2].refresh_token).expect(200)).body as TokenPair;
      expect(await rotatedHashes(grantId)).toEqual([pairs[1], pairs[2]].map((p) => sha256(p.refresh_token)).sort());
      await me(next.access_token).expect(200);
    });

    it.each([
      ['not yet deleted', false],
      ['deleted', true],
    ])('refuses one presented again (%s) with invalid_grant, and the authorization goes on', async (_, deleted) => {
      const { grantId, pairs } = await refreshed(2);
      await endsIn(pairs[0].refresh_token, '-1 second');
      if (deleted) await cleanUp();
      expect(await rotatedHashes(grantId)).toHaveLength(deleted ? 1 : 2);
      expect((await refresh(pairs[0].refresh_token).expect(400)).body.error).toBe('invalid_grant');
      await revoke(pairs[0].refresh_token).expect(200); // RFC 7009: an unknown token, nothing to revoke
      await me(pairs[2].access_token).expect(200);
      // Within its lifetime a rotated token still ends it.
      expect((await refresh(pairs[1].refresh_token).expect(400)).body.error).toBe('invalid_grant');
      await me(pairs[2].access_token).expect(401);
      expect((await refresh(pairs[2].refresh_token).expect(400)).body.error).toBe('invalid_grant');
    });
  });

  // The migration moves what earlier releases left: every revoked row of a
  // live authorization that a newer row superseded, not one still waiting
  // for its successor, nor an ended authorization's.
  it('migrates the superseded rows left behind, and reuse detection still finds them', async () => {
    const db = t.app.get(DataSource);
    const runner = { query: (sql: string, params?: unknown[]) => db.query(sql, params) } as unknown as QueryRunner;
    const migration = new IdentityOAuthRotatedRefreshTokens1795650000000();
    const live = await refreshed(3);
    const ended = await refreshed(1);
    await refresh(ended.pairs[0].refresh_token).expect(400); // a reuse ends it
    const waiting = await refreshed(0);

    await migration.down(runner);
    // As an earlier release left them: every pair a row, the rotated ones revoked.
    expect((await tokenRows(live.grantId)).sort()).toEqual(live.pairs.map((p) => sha256(p.refresh_token)).sort());
    await query(`UPDATE identity.oauth_tokens SET revoked_at = now() WHERE grant_id = $1`, [waiting.grantId]); // refresh under way
    await migration.up(runner);
    await new IdentityOAuthRotatedRefreshExpiry1795680000000().up(runner);
    // A moved token's own end is not known: it gets the latest it can have, now plus the refresh token lifetime.
    const [moved] = await query(
      `SELECT min(expires_at - now()) > interval '29 days 23 hours' AND max(expires_at - now()) <= interval '30 days' AS ok
         FROM identity.oauth_rotated_refresh_tokens WHERE grant_id = $1`,
      [live.grantId],
    );
    expect(moved.ok).toBe(true);

    expect(await tokenRows(live.grantId)).toEqual([sha256(live.pairs[3].refresh_token)]);
    expect(await rotatedHashes(live.grantId)).toEqual(live.pairs.slice(0, 3).map((p) => sha256(p.refresh_token)).sort());
    expect(await tokenRows(ended.grantId)).toHaveLength(2);
    expect(await tokenRows(waiting.grantId)).toHaveLength(1);
    await me(live.pairs[3].access_token).expect(200);
    expect((await refresh(live.pairs[1].refresh_token).expect(400)).body.error).toBe('invalid_grant');
    await me(live.pairs[3].access_token).expect(401);
  });
});
