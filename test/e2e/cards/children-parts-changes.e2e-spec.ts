import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { importWorld } from '../../support/import-client.js';
import { getPausedAfterHead } from '../../support/raw-http.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, groupingClient, type CardJson } from '../grouping/grouping-fixtures.js';

/**
 * A card's children past the first part are read by id, a part at a time,
 * each once the client took the one before (children-parts.e2e-spec.ts).
 * A child archived or moved to another parent after the first statement
 * read the ids must not be sent for all that: archived children appear only
 * with with_archived=true (DESIGN.md §4), and a moved one is no child any
 * more. Heavy children (10 000 characters each) make parts of 500 cards,
 * about 5 MB each: a client that stops reading after the first bytes holds
 * the answer before the third part (ids 1000 on) is read, past any buffer
 * of the connection, while the children change.
 */
describe('GET /cards/{id}/children while children change between its parts', () => {
  const COUNT = 1200;
  let t: TestApp, alice: TestUser, c: ReturnType<typeof groupingClient>;
  let root: number, port: number;

  beforeAll(async () => {
    let team: number;
    let imports: Awaited<ReturnType<typeof importWorld>>['imports'];
    ({ t, alice, team, imports } = await importWorld());
    c = groupingClient(t);
    const project = await c.project(alice, team);
    root = project.top_level_card_id;
    const note = 'n'.repeat(10_000);
    const rows = Array.from({ length: COUNT }, (_, i) => `c${i},${note}`);
    const file = await imports.discoverCsv(`Title,Notes\n${rows.join('\n')}\n`);
    const mapping = { '0': { type: 'title' }, '1': { type: 'attribute', attr_type: 'text', name: 'Notes' } };
    const res = await imports.importing({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping });
    expect([res.status, res.body.created]).toEqual([200, COUNT]);
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  }, 180_000);
  afterAll(() => t.close());

  const childIds = async () => (await t.http.get(`${API}/cards/${root}/children?only_ids=true`).set(as(alice)).expect(200)).body as number[];
  /** The children, the client pausing after the first bytes while `meanwhile` runs. */
  const childrenPaused = async (query: string, meanwhile: () => Promise<unknown>) => {
    const res = await getPausedAfterHead(port, `${API}/cards/${root}/children${query}`, as(alice), meanwhile);
    expect([res.status, res.headers['transfer-encoding']]).toEqual([200, 'chunked']);
    return JSON.parse(res.body) as CardJson[];
  };
  const archive = (id: number) => t.http.post(`${API}/cards/${id}/archive`).set(as(alice)).expect(200);

  it('leaves out a child archived, and one moved away, after the ids were read', async () => {
    const ids = await childIds();
    const [archived, moved] = [ids[COUNT - 1], ids[COUNT - 2]];

    const listed = await childrenPaused('', async () => {
      await archive(archived);
      await c.relocate(alice, moved, { parent_id: ids[0] });
    });

    expect(listed.map((x) => x.id)).toEqual(ids.slice(0, COUNT - 2));
    expect(listed.some((x) => x.is_archived)).toBe(false);
    expect(await childIds()).toEqual(ids.slice(0, COUNT - 2));
  }, 60_000);

  it('with_archived=true: keeps a child archived meanwhile, as it then is, and leaves out one moved away', async () => {
    const ids = (await t.http.get(`${API}/cards/${root}/children?only_ids=true&with_archived=true`).set(as(alice)).expect(200)).body as number[];
    const [archived, moved] = [ids[1100], ids[1101]];

    const listed = await childrenPaused('?with_archived=true', async () => {
      await archive(archived);
      await c.relocate(alice, moved, { parent_id: ids[0] });
    });

    expect(listed.map((x) => x.id)).toEqual(ids.filter((id) => id !== moved));
    expect(listed.find((x) => x.id === archived)?.is_archived).toBe(true);
  }, 60_000);
});
