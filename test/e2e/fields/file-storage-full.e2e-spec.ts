import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

// A disk that cannot take an upload (full, or remounted read-only) is the
// server's trouble, not the request's: 503 problem+json with Retry-After, not
// a 500 (docs/RELIABILITY.md, "Storage full or read-only"). DATA_DIR is a
// small tmpfs, which only root may mount: elsewhere the suite is skipped.
const root = mkdtempSync(path.join(tmpdir(), 'cardwork-full-'));
const dataDir = path.join(root, 'data');

function mounted(): boolean {
  try {
    execFileSync('mkdir', ['-p', dataDir]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', dataDir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const canMount = mounted();
const describeWhereMountable = canMount ? describe : describe.skip;
if (!canMount) console.warn('file-storage-full: skipped, mounting a small tmpfs as DATA_DIR needs root');

describeWhereMountable('uploads on a disk that cannot take them', () => {
  let t: TestApp, c: FieldsClient, w: World, ann: TestUser;

  beforeAll(async () => {
    ({ t, c, w, ann } = await fieldsWorld({ env: { DATA_DIR: dataDir } }));
    await c.field(ann, w.project, 'Docs', 'files');
  });
  afterAll(async () => {
    await t.close();
    execFileSync('umount', [dataDir]);
    rmSync(root, { recursive: true, force: true });
  });

  const upload = (card: number, bytes: number) =>
    t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(ann)).attach('value', Buffer.alloc(bytes, 7), 'big.bin');

  function expectStorageRefusal(res: Response, why: RegExp): void {
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.body).toMatchObject({ status: 503, type: 'SERVICE.UNAVAILABLE' });
    expect(res.body.detail).toMatch(why);
  }

  it('answers a full disk 503 with Retry-After, stores nothing, and takes what fits', async () => {
    const card = (await c.card(ann, w.root, 'full')).id;
    expectStorageRefusal(await upload(card, 600_000), /storage is full/);
    expect((await c.get(ann, card)).attributes.Docs).toEqual([]);
    await upload(card, 1_000).expect(200);
  });

  it('answers a read-only disk 503 with Retry-After, and serves again once writable', async () => {
    const card = (await c.card(ann, w.root, 'read-only')).id;
    execFileSync('mount', ['-o', 'remount,ro', dataDir]);
    try {
      expectStorageRefusal(await upload(card, 1_000), /not writable/);
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', dataDir]);
    }
    await upload(card, 1_000).expect(200);
  });
});
