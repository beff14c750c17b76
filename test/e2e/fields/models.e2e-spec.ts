import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, expectRefusal, fieldsWorld, type AttributeJson, type FieldsClient, type World } from './fields-fixtures.js';

interface ModelJson {
  id: number;
  project_id: number;
  name: string;
}

describe('models', () => {
  let t: TestApp, c: FieldsClient, w: World;
  let ann: TestUser, vic: TestUser, eve: TestUser;
  let bug: ModelJson;
  let story: ModelJson;
  let evilModel: ModelJson;
  let card: number;

  const createModel = (user: TestUser, project: number, name: unknown) =>
    t.http.post(`${API}/projects/${project}/models`).set(as(user)).send({ name });
  const modelField = (user: TestUser, model: number, body: object) =>
    t.http.post(`${API}/models/${model}/attributes`).set(as(user)).send(body);
  const setModel = (user: TestUser, cardId: number, body: object) =>
    t.http.post(`${API}/cards/${cardId}/model`).set(as(user)).send(body);

  beforeAll(async () => {
    ({ t, c, ann, w, users: { vic, eve } } = await fieldsWorld({ users: { vic: 'viewer', eve: 'outsider' } }));
    await c.field(ann, w.project, 'Estimate', 'number');
    const evil = await c.world(eve, 'Evil');
    evilModel = (await createModel(eve, evil.project, 'Evil model').expect(201)).body;
    card = (await c.card(ann, w.root, 'modelled')).id;
  });
  afterAll(() => t.close());

  it('creates models (201) and lists them', async () => {
    bug = (await createModel(ann, w.project, 'Bug').expect(201)).body;
    expect(bug).toEqual({ id: expect.any(Number), project_id: w.project, name: 'Bug' });
    story = (await createModel(ann, w.project, 'Story').expect(201)).body;
    const list = (await t.http.get(`${API}/projects/${w.project}/models`).set(as(vic)).expect(200)).body;
    expect(list).toEqual([bug, story]);
    await createModel(ann, w.project, 'bug').expect(409);
    await createModel(ann, w.project, '').expect(400);
    await createModel(ann, w.project, 5).expect(400);
    await createModel(vic, w.project, 'Viewer model').expect(403);
  });

  it('gives models their own fields; names are unique where a card could see both', async () => {
    const severity = (await modelField(ann, bug.id, { name: 'Severity', type: 'number' }).expect(201)).body as AttributeJson;
    expect(severity).toMatchObject({ name: 'Severity', type: 'number', project_id: w.project, model_id: bug.id });
    await modelField(ann, bug.id, { name: 'Steps', type: 'content' }).expect(201);
    // Another model may reuse a name: no card has two models.
    await modelField(ann, story.id, { name: 'Severity', type: 'text' }).expect(201);
    await modelField(ann, story.id, { name: 'Points', type: 'number' }).expect(201);
    // A model field and a project field are both seen by the model's cards.
    expect((await modelField(ann, bug.id, { name: 'estimate', type: 'text' }).expect(409)).body.type).toBe('FIELDS.NAME_TAKEN');
    await modelField(ann, bug.id, { name: 'SEVERITY', type: 'text' }).expect(409);
    expect((await t.http.post(`${API}/projects/${w.project}/attributes`).set(as(ann)).send({ name: 'points', type: 'text' })).status).toBe(409);
    const bugFields = (await t.http.get(`${API}/models/${bug.id}/attributes`).set(as(vic)).expect(200)).body as AttributeJson[];
    expect(bugFields.map((f) => f.name)).toEqual(['Severity', 'Steps']);
    const projectFields = (await t.http.get(`${API}/projects/${w.project}/attributes`).set(as(ann)).expect(200)).body as AttributeJson[];
    expect(projectFields.map((f) => f.name)).toEqual(['Estimate']);
    await modelField(vic, bug.id, { name: 'Viewer', type: 'text' }).expect(403);
    await modelField(ann, bug.id, { name: 'Bad', type: 'nope' }).expect(400);
  });

  it('refuses values for model fields on cards without that model (400), in every operation', async () => {
    const before = await c.get(ann, card);
    expect(before.attributes).toEqual({ Estimate: null });
    expectRefusal(await c.set(ann, card, 'Severity', 3), 'Severity');
    expectRefusal(await c.setMany(ann, card, { Severity: 3, Estimate: 1 }), 'Severity');
    expectRefusal(await c.setMany(ann, card, { attributes: { Steps: 'x' } }), 'Steps');
    const res = await t.http.post(`${API}/cards/${w.root}/children`).set(as(ann)).send({ title: 'x', attributes: { Points: 1 } });
    expectRefusal(res, 'Points');
    expect(await c.get(ann, card)).toEqual(before);
  });

  it('POST /cards/{id}/model associates the card and shows the model fields', async () => {
    const res = await setModel(ann, card, { model_id: bug.id }).expect(200);
    expect(res.body.model_id).toBe(bug.id);
    expect(res.body.attributes).toEqual({ Estimate: null, Severity: null, Steps: null });
    const set = await c.setMany(ann, card, { Severity: '2', Steps: '1. open\n2. crash', Estimate: 5 }).expect(200);
    expect(set.body.attributes).toEqual({ Estimate: 5, Severity: 2, Steps: '1. open\n2. crash' });
    expectRefusal(await c.set(ann, card, 'Points', 1), 'Points');
  });

  it('keeps hidden values when the model changes and shows them again when it comes back', async () => {
    let res = await setModel(ann, card, { model_id: story.id }).expect(200);
    expect(res.body.attributes).toEqual({ Estimate: 5, Severity: null, Points: null });
    res = await c.setMany(ann, card, { Severity: 'major', Points: 8 }).expect(200);
    expect(res.body.attributes).toEqual({ Estimate: 5, Severity: 'major', Points: 8 });
    res = await setModel(ann, card, { model_id: null }).expect(200);
    expect(res.body.model_id).toBeNull();
    expect(res.body.attributes).toEqual({ Estimate: 5 });
    res = await setModel(ann, card, { model_id: String(bug.id) }).expect(200);
    expect(res.body.attributes).toEqual({ Estimate: 5, Severity: 2, Steps: '1. open\n2. crash' });
    res = await setModel(ann, card, { model_id: story.id }).expect(200);
    expect(res.body.attributes).toEqual({ Estimate: 5, Severity: 'major', Points: 8 });
    expect((await c.get(ann, card)).model_id).toBe(story.id);
  });

  it('records model changes in the card stream', async () => {
    const entries = (await c.stream(ann, card)).filter((e) => e.action === 'card.model_changed').reverse();
    expect(entries.map((e) => [e.kind, e.data.from, e.data.to])).toEqual([
      ['activity', null, bug.id],
      ['activity', bug.id, story.id],
      ['activity', story.id, null],
      ['activity', null, bug.id],
      ['activity', bug.id, story.id],
    ]);
    const count = entries.length;
    await setModel(ann, card, { model_id: story.id }).expect(200);
    expect((await c.stream(ann, card)).filter((e) => e.action === 'card.model_changed')).toHaveLength(count);
  });

  it('refuses a model_id that is malformed, unknown, of another project or of another team (400)', async () => {
    const other = await c.project(ann, w.org, 'Other');
    const otherModel = (await createModel(ann, other.project, 'Elsewhere').expect(201)).body as ModelJson;
    const before = await c.get(ann, card);
    for (const body of [[1], { model_id: true }, { model_id: 'abc' }, { model_id: 0 }, { model_id: `0${bug.id}` }, { model_id: ` ${bug.id}` }, { model_id: 99999999 }, { model_id: otherModel.id }, { model_id: evilModel.id }]) {
      const res = await setModel(ann, card, body);
      expectRefusal(res, 'model_id');
    }
    expectRefusal(await setModel(ann, card, { model_id: null, extra: 1 }), 'extra');
    expect(await c.get(ann, card)).toEqual(before);
  });

  it('needs write access on the card; other teams get 404', async () => {
    await setModel(vic, card, { model_id: null }).expect(403);
    await setModel(eve, card, { model_id: null }).expect(404);
    await t.http.get(`${API}/projects/${w.project}/models`).set(as(eve)).expect(404);
    await createModel(eve, w.project, 'Intruder').expect(404);
    await t.http.get(`${API}/models/${bug.id}/attributes`).set(as(eve)).expect(404);
    await modelField(eve, bug.id, { name: 'Intruder', type: 'text' }).expect(404);
    await t.http.get(`${API}/models/${evilModel.id}/attributes`).set(as(ann)).expect(404);
    await modelField(ann, evilModel.id, { name: 'Mine', type: 'text' }).expect(404);
    await t.http.get(`${API}/models/99999999/attributes`).set(as(ann)).expect(404);
  });

  it('finds model fields by id in the path, refusing them on cards of another model', async () => {
    const bugFields = (await t.http.get(`${API}/models/${bug.id}/attributes`).set(as(ann)).expect(200)).body as AttributeJson[];
    const severity = bugFields.find((f) => f.name === 'Severity')!;
    const res = await c.set(ann, card, severity.id, 1);
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('FIELDS.ATTRIBUTE_NOT_AVAILABLE');
    await setModel(ann, card, { model_id: bug.id }).expect(200);
    expect((await c.set(ann, card, severity.id, 4).expect(200)).body.attributes.Severity).toBe(4);
  });
});
