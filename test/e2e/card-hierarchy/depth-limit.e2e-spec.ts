import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { importClient } from '../../support/import-client.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import type { ProjectJson } from '../../support/workspace-client.js';
import { API, cardWorld, expectConsistentTree, type CardClient } from './card-fixtures.js';

/**
 * MAX_CARD_DEPTH: no card is created or moved deeper than that below the
 * top-level card (409 CARD.TOO_DEEP, nothing written). A subtree's archive,
 * restore and move write every card's path, as long as its depth: a chain of
 * 5 000 cards, built through the API in a minute, took 18-23 s to move or
 * restore, and one of 8 000 would never have finished within the statement
 * timeout.
 */
describe('the deepest a card may be (MAX_CARD_DEPTH = 3)', () => {
  let t: TestApp, ann: TestUser, c: CardClient, project: ProjectJson, root: number;
  let chain: number[]; // depths 1, 2, 3

  beforeAll(async () => {
    ({ t, ann, c, project, root } = await cardWorld({ project: 'Deep', env: { MAX_CARD_DEPTH: '3' } }));
    chain = [];
    for (let parent = root; chain.length < 3; parent = chain.at(-1)!) chain.push((await c.create(ann, parent, `level ${chain.length + 1}`)).id);
  });
  afterAll(() => t.close());

  const tooDeep = (res: { status: number; body: { type?: string } }) => expect([res.status, res.body.type]).toEqual([409, 'CARD.TOO_DEEP']);

  it('creates a card at the deepest level, not below it', async () => {
    tooDeep(await t.http.post(`${API}/cards/${chain[2]}/children`).set(as(ann)).send({ title: 'level 4' }));
    expect(await c.childIds(ann, chain[2])).toEqual([]);
    await expectConsistentTree(t, ann, project);
  });

  it('moves a subtree only where its deepest card stays within the limit', async () => {
    const top = await c.create(ann, root, 'subtree');
    const below = await c.create(ann, top.id, 'below it');
    // Under level 2, `below` would be at 4.
    tooDeep(await c.relocate(ann, top.id, { parent_id: chain[1] }, 409));
    expect((await c.get(ann, below.id)).depth).toBe(2);
    // Under level 1 it is at 3; alone, under level 2, at 3 too; and back up again.
    expect((await c.relocate(ann, top.id, { parent_id: chain[0] })).body.depth).toBe(2);
    expect((await c.relocate(ann, below.id, { parent_id: chain[1] })).body.depth).toBe(3);
    expect((await c.relocate(ann, below.id, { parent_id: root })).body.depth).toBe(1);
    await expectConsistentTree(t, ann, project);
  });

  it('refuses an import that would add children below the deepest level, writing nothing', async () => {
    const imports = importClient(t, ann);
    const file = await imports.discoverCsv(`Title,Children\nlevel 3,"too deep"\n`);
    const mapping = { '0': { type: 'title' }, '1': { type: 'children' } };
    tooDeep(await imports.importing({ discover_file_id: file, project_id: project.id, options: { ignore_header: true }, mapping, update_field: 'title' }));
    expect(await c.childIds(ann, chain[2])).toEqual([]);
    await expectConsistentTree(t, ann, project);
  });
});
