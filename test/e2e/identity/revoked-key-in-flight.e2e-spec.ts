import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { credentialWindowKey } from '../../../src/modules/identity/application/api-keys.service.js';
import { FRESH_LOOKUP_MS } from '../../../src/modules/identity/auth/early-key-lookup.js';
import { hashLimitKey } from '../../../src/modules/identity/infrastructure/rate-limit.store.js';
import { holdUpload, type HeldUpload } from '../../support/held-uploads.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { teamWorld } from '../../support/team-world.js';

const API = '/api/1.0';

/**
 * The key is looked up as a request's head arrives (early-key-lookup.ts); a
 * body held back past FRESH_LOOKUP_MS must still meet the key as it is when
 * the guard runs. Each request here sends its head and the first bytes of
 * its body, waits until its key's hit is counted (the early lookup has run),
 * then just past the freshness window, and only then sends the rest.
 */
describe('a key revoked while its request is in flight', () => {
  let t: TestApp, ann: TestUser, root: number, port: number;
  beforeAll(async () => {
    ({ t, ann, root } = await teamWorld({ team: 'Revoke', project: 'R' }));
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  const hits = async (key: string): Promise<number> => {
    const rows = (await t.app.get(DataSource).query('SELECT hits FROM identity.rate_limit_windows WHERE key = $1', [
      hashLimitKey(credentialWindowKey(key)),
    ])) as Array<{ hits: number }>;
    return Number(rows[0]?.hits ?? 0);
  };

  /** One more key of ann's (its id and secret). */
  const newKey = async (): Promise<{ id: number; key: string }> => {
    const res = await t.http.post(`${API}/me/api-keys`).set(as(ann)).send({}).expect(201);
    return { id: res.body.id as number, key: res.body.api_key as string };
  };

  /** Holds the body back until the early lookup is older than the freshness window. */
  const pastFreshness = async (seenAt: number) => {
    const wait = FRESH_LOOKUP_MS + 30 - (performance.now() - seenAt);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  };

  const comments = async (content: string) => {
    const res = await t.http.get(`${API}/cards/${root}/stream`).set(as(ann)).expect(200);
    return (res.body as Array<{ kind: string; content: string | null }>).filter((e) => e.kind === 'comment' && e.content === content);
  };

  /** A comment on the project's top card: its head and 3 bytes of its body sent; resolves once its key's hit is counted. */
  const hold = async (key: string, headers: Record<string, string>, content: string): Promise<{ held: HeldUpload; before: number; seenAt: number }> => {
    const before = await hits(key);
    const body = Buffer.from(JSON.stringify({ content }));
    const held = holdUpload(port, `${API}/cards/${root}/comments`, headers, { type: 'application/json', body }, { firstBytes: 3 });
    const deadline = Date.now() + 5000;
    while ((await hits(key)) === before) {
      if (Date.now() > deadline || held.answered) {
        held.abort();
        throw new Error("the key's early lookup never counted the request");
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    return { held, before, seenAt: performance.now() };
  };

  it.each([
    ['X-Api-Key', (key: string) => ({ 'X-Api-Key': key })],
    ['HTTP Basic', (key: string) => ({ Authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` })],
  ])('refuses (401) a write whose body came after its %s key was revoked, and stores nothing', async (label, headers) => {
    const { id, key } = await newKey();
    const content = `after the revoke (${label})`;
    const { held, seenAt } = await hold(key, headers(key), content);
    await t.http.delete(`${API}/me/api-keys/${id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/me`).set({ 'X-Api-Key': key }).expect(401);
    await pastFreshness(seenAt);
    held.finish();
    const answer = await held.answer;
    expect(answer.status).toBe(401);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await comments(content)).toEqual([]);
  });

  it('takes a live key whose body came late, counting its request once', async () => {
    const { key } = await newKey();
    const content = 'late but live';
    const { held, before, seenAt } = await hold(key, { 'X-Api-Key': key }, content);
    await pastFreshness(seenAt);
    held.finish();
    expect((await held.answer).status).toBe(201);
    expect(await comments(content)).toHaveLength(1);
    expect(await hits(key)).toBe(before + 1);
  });
});
