import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, cardWorld, type CardClient, type CardJson, type ProjectJson } from './card-fixtures.js';

describe('card access', () => {
  let t: TestApp, c: CardClient, project: ProjectJson;
  let ann: TestUser, mia: TestUser, vic: TestUser, eve: TestUser; // eve: admin of Evil, outside Acme
  let card: CardJson;
  let child: CardJson;
  let evilProject: ProjectJson;
  let evilCard: CardJson;

  beforeAll(async () => {
    ({ t, c, ann, project, users: { mia, vic, eve } } = await cardWorld({
      team: 'Acme',
      project: 'Roadmap',
      users: { mia: 'member', vic: 'viewer', eve: 'outsider' },
    }));
    card = await c.create(ann, project.top_level_card_id, 'card');
    child = await c.create(ann, card.id, 'child');
    await t.http.post(`${API}/cards/${card.id}/comments`).set(as(ann)).send({ content: 'hello' }).expect(201);
    const evilOrg = await c.team(eve, 'Evil');
    evilProject = await c.project(eve, evilOrg, 'Evil');
    evilCard = await c.create(eve, evilProject.top_level_card_id, 'evil');
  });
  afterAll(() => t.close());

  const snapshot = async () => ({
    card: await c.get(ann, card.id),
    child: await c.get(ann, child.id),
    kids: await c.childIds(ann, card.id),
    stream: (await c.stream(ann, card.id)).map((e) => e.id),
    listing: await c.listing(ann, project.id, { with_archived: 'true' }),
  });

  it('needs credentials', async () => {
    await t.http.get(`${API}/cards/${card.id}`).expect(401);
    await t.http.post(`${API}/cards/${card.id}/children`).send({ title: 'x' }).expect(401);
    await t.http.get(`${API}/projects/${project.id}/cards`).expect(401);
  });

  it('hides a card from a user outside the team: 404 on every read and write', async () => {
    const before = await snapshot();
    const reads = [
      t.http.get(`${API}/cards/${card.id}`),
      t.http.get(`${API}/cards/${card.id}/children`),
      t.http.get(`${API}/cards/${card.id}/stream`),
      t.http.get(`${API}/cards/${project.top_level_card_id}`),
      t.http.get(`${API}/projects/${project.id}/cards`),
      t.http.get(`${API}/projects/${project.id}/cards`).query({ only_ids: 'true' }),
    ];
    for (const req of reads) {
      const res = await req.set(as(eve)).expect(404);
      expect(JSON.stringify(res.body)).not.toContain('Roadmap');
    }
    const writes = [
      t.http.post(`${API}/cards/${card.id}/children`).send({ title: 'intruder' }),
      t.http.post(`${API}/cards/${project.top_level_card_id}/children`).send({ title: 'intruder' }),
      t.http.put(`${API}/cards/${card.id}`).send({ title: 'owned' }),
      t.http.post(`${API}/cards/${card.id}/state`).send({ state: 'dropped' }),
      t.http.post(`${API}/cards/${card.id}/archive`),
      t.http.delete(`${API}/cards/${card.id}/archive`),
      t.http.delete(`${API}/cards/${child.id}`),
      t.http.post(`${API}/cards/${child.id}/relocate`).send({ parent_id: project.top_level_card_id }),
      t.http.post(`${API}/cards/${card.id}/comments`).send({ content: 'spam' }),
    ];
    for (const req of writes) await req.set(as(eve)).expect(404);
    expect(await snapshot()).toEqual(before);
  });

  it('gives the same 404 for a hidden card as for a card that does not exist', async () => {
    const hidden = await t.http.get(`${API}/cards/${card.id}`).set(as(eve)).expect(404);
    const missing = await t.http.get(`${API}/cards/999999999`).set(as(eve)).expect(404);
    expect(hidden.body).toEqual(missing.body);
  });

  it('lets a viewer read everything', async () => {
    expect(await c.get(vic, card.id)).toMatchObject({ id: card.id, title: 'card' });
    expect(await c.childIds(vic, card.id)).toEqual([child.id]);
    expect((await c.stream(vic, card.id)).length).toBeGreaterThan(0);
    expect((await c.listing(vic, project.id)).total).toBeGreaterThanOrEqual(2);
  });

  it('refuses every write of a viewer with 403 and changes nothing', async () => {
    const before = await snapshot();
    const writes = [
      t.http.post(`${API}/cards/${card.id}/children`).send({ title: 'viewer card' }),
      t.http.post(`${API}/cards/${project.top_level_card_id}/children`).send({ title: 'viewer card' }),
      t.http.put(`${API}/cards/${card.id}`).send({ title: 'viewer title' }),
      t.http.put(`${API}/cards/${card.id}`).send({ state: 'closed' }),
      t.http.post(`${API}/cards/${card.id}/state`).send({ state: 'closed' }),
      t.http.post(`${API}/cards/${card.id}/archive`),
      t.http.delete(`${API}/cards/${card.id}/archive`),
      t.http.delete(`${API}/cards/${child.id}`),
      t.http.post(`${API}/cards/${child.id}/relocate`).send({ parent_id: project.top_level_card_id }),
      t.http.post(`${API}/cards/${child.id}/relocate`).send({ position: 0 }),
      t.http.post(`${API}/cards/${card.id}/comments`).send({ content: 'viewer comment' }),
    ];
    for (const req of writes) {
      const res = await req.set(as(vic)).expect(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('lets a member write', async () => {
    const made = await c.create(mia, card.id, 'by mia');
    await t.http.put(`${API}/cards/${made.id}`).set(as(mia)).send({ state: 'accepted' }).expect(200);
    await t.http.delete(`${API}/cards/${made.id}`).set(as(mia)).expect(200);
  });

  it("refuses another team's card as the new parent and changes neither tree", async () => {
    const before = await snapshot();
    const evilBefore = await c.childIds(eve, evilCard.id);
    const res = await t.http.post(`${API}/cards/${child.id}/relocate`).set(as(ann)).send({ parent_id: evilCard.id });
    expect([400, 404]).toContain(res.status);
    // The answer must not tell a foreign card from a missing one.
    const missing = await t.http.post(`${API}/cards/${child.id}/relocate`).set(as(ann)).send({ parent_id: 999999999 });
    expect(res.status).toBe(missing.status);
    expect(res.body.detail).toBe(missing.body.detail);
    // Nor may the outsider pull our card into their tree, nor theirs into ours.
    await t.http.post(`${API}/cards/${child.id}/relocate`).set(as(eve)).send({ parent_id: evilCard.id }).expect(404);
    const pushed = await t.http.post(`${API}/cards/${evilCard.id}/relocate`).set(as(eve)).send({ parent_id: card.id });
    expect([400, 404]).toContain(pushed.status);
    expect(await snapshot()).toEqual(before);
    expect(await c.childIds(eve, evilCard.id)).toEqual(evilBefore);
    expect((await c.get(eve, evilCard.id)).parent_id).toBe(evilProject.top_level_card_id);
  });

  it('loses access when removed from the team', async () => {
    const tmp = await t.user();
    await c.addMember(ann, project.organization_id, tmp, 'member');
    await c.get(tmp, card.id);
    await t.http.delete(`${API}/organizations/${project.organization_id}/members/${tmp.id}`).set(as(ann)).expect(200);
    await t.http.get(`${API}/cards/${card.id}`).set(as(tmp)).expect(404);
    await t.http.post(`${API}/cards/${card.id}/children`).set(as(tmp)).send({ title: 'x' }).expect(404);
  });
});
