import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { FileBlobs } from '../../../src/modules/fields/files/application/file-blobs.service.js';
import { PgFaultRelay } from '../../support/pg-fault-relay.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from '../fields/fields-fixtures.js';

// A COMMIT whose answer never came (docs/RELIABILITY.md, "PostgreSQL
// outage"): the request is a 503, but the change may be made, so the files it
// stored stay until the rows say whether they are named. Before, they were
// deleted at once, and a file whose row had committed answered 404 for good.
// The faults are made by a relay between the server and PostgreSQL; the
// embedded database has no network to cut.
const serverUrl = process.env.DATABASE_URL;
const describeWithServer = serverUrl ? describe : describe.skip;
if (!serverUrl) console.warn('commit-outcome: skipped, it needs a PostgreSQL server (DATABASE_URL) to put a relay in front of');

interface FileJson {
  id: number;
  name: string;
}

/** Stored contents under DATA_DIR/files: blobs only (no temp files, no marks). */
function storedBlobs(dataDir: string): string[] {
  const base = path.join(dataDir, 'files');
  return readdirSync(base)
    .filter((shard) => shard.length === 2)
    .flatMap((shard) => readdirSync(path.join(base, shard)).filter((name) => !name.endsWith('.tmp')));
}

describeWithServer('a COMMIT whose answer never came', () => {
  let relay: PgFaultRelay;
  let t: TestApp, c: FieldsClient, w: World, ann: TestUser;
  // A data directory of its own: settling reads every mark in it against this test's database.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cardwork-commit-'));

  beforeAll(async () => {
    relay = await PgFaultRelay.toDatabase(serverUrl!);
    ({ t, c, w, ann } = await fieldsWorld({ databaseUrl: (url) => relay.through(url), env: { DATA_DIR: dataDir } }));
    await c.field(ann, w.project, 'Docs', 'files');
  });
  afterAll(async () => {
    await relay.set('pass');
    await t.close();
    await relay.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs `request` with the relay in `mode` for its COMMIT, then relays again. */
  async function cutCommit(mode: 'commitcut' | 'commitdrop', request: () => Promise<Response>): Promise<Response> {
    const cutBefore = relay.commitsCut;
    await relay.set(mode);
    try {
      const res = await request();
      expect(relay.commitsCut).toBe(cutBefore + 1);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      return res;
    } finally {
      await relay.set('pass');
    }
  }

  const download = (file: FileJson) => t.http.get(`${API}/files/${file.id}`).set(as(ann)).buffer(true);

  it('keeps the file an append stored when its row committed, and settling keeps it', async () => {
    const card = (await c.card(ann, w.root, 'append')).id;
    await cutCommit('commitcut', () =>
      t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(ann)).attach('value', Buffer.from('first file'), 'f1.txt'),
    );
    const [file] = (await c.get(ann, card)).attributes.Docs as FileJson[];
    expect(file.name).toBe('f1.txt');
    expect((await download(file).expect(200)).text).toBe('first file');

    expect(await t.app.get(FileBlobs).settleUnsettled(0)).toEqual([]);
    expect((await download(file).expect(200)).text).toBe('first file');
  });

  it('keeps the file of a card created with a file value when the card committed', async () => {
    await cutCommit('commitcut', () =>
      t.http
        .post(`${API}/cards/${w.root}/children`)
        .set(as(ann))
        .send({ title: 'created', attributes: { Docs: [{ name: 'f2.txt', data: 'second file' }] } }),
    );
    const children = (await t.http.get(`${API}/cards/${w.root}/children`).set(as(ann)).expect(200)).body as Array<{ id: number; title: string }>;
    const created = children.find((child) => child.title === 'created');
    expect(created).toBeDefined();
    const [file] = (await c.get(ann, created!.id)).attributes.Docs as FileJson[];
    expect((await download(file).expect(200)).text).toBe('second file');
    expect(await t.app.get(FileBlobs).settleUnsettled(0)).toEqual([]);
    await download(file).expect(200);
  });

  it('deletes, once settled, a file whose transaction never committed, and only that one', async () => {
    const card = (await c.card(ann, w.root, 'dropped')).id;
    const before = storedBlobs(dataDir);
    await cutCommit('commitdrop', () =>
      t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(ann)).attach('value', Buffer.from('never committed'), 'f3.txt'),
    );
    expect((await c.get(ann, card)).attributes.Docs).toEqual([]);
    const orphan = storedBlobs(dataDir).filter((key) => !before.includes(key));
    expect(orphan).toHaveLength(1);

    expect(await t.app.get(FileBlobs).settleUnsettled(0)).toEqual(orphan);
    expect(storedBlobs(dataDir).sort()).toEqual([...before].sort());
  });
});
