import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { colonlessBasic, listen, rawClient, send, teamWithProject, type RawClient, type RawProject } from './raw-client.js';

interface CardJson {
  id: number;
  model_id: number | null;
  attributes: Record<string, unknown>;
}

/** Issue 14.6: POST /cards/{id}/model without model_id removes the model, like null. */
describe('compatibility: removing a card’s model without model_id', () => {
  let t: TestApp;
  let ann: RawClient;
  let annKey: string;
  let project: RawProject;
  let model: number;

  const cardWithModel = async (title: string) => {
    const card = await ann.json<CardJson>('POST', `/cards/${project.top_level_card_id}/children`, { title }, 201);
    const withModel = await ann.json<CardJson>('POST', `/cards/${card.id}/model`, { model_id: model }, 200);
    expect(withModel).toMatchObject({ model_id: model, attributes: { Severity: null } });
    return card.id;
  };

  beforeAll(async () => {
    t = await createTestApp();
    annKey = (await t.user()).apiKey;
    ann = rawClient(await listen(t), annKey);
    ({ project } = await teamWithProject(ann, 'Models'));
    model = (await ann.json<{ id: number }>('POST', `/projects/${project.id}/models`, { name: 'Bug' }, 201)).id;
    await ann.json('POST', `/models/${model}/attributes`, { name: 'Severity', type: 'text' }, 201);
  });
  afterAll(() => t.close());

  it('with {} answers 200 and the card without its model, and says so in the stream', async () => {
    const id = await cardWithModel('empty object');
    const res = await ann.call('POST', `/cards/${id}/model`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, model_id: null });
    expect((res.body as CardJson).attributes).not.toHaveProperty('Severity');
    expect(await ann.json('GET', `/cards/${id}`, undefined, 200)).toMatchObject({ model_id: null });
    const stream = await ann.json<{ action: string; data: Record<string, unknown> }[]>('GET', `/cards/${id}/stream`, undefined, 200);
    expect(stream.filter((e) => e.action === 'card.model_changed').map((e) => e.data)).toEqual([
      expect.objectContaining({ from: model, to: null }),
      expect.objectContaining({ from: null, to: model }),
    ]);
  });

  it('with no body at all removes it too, as null does', async () => {
    const bare = await cardWithModel('no body');
    const res = await send(`${ann.api}/cards/${bare}/model`, 'POST', { Authorization: colonlessBasic(annKey) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: bare, model_id: null });
    const explicit = await cardWithModel('null');
    expect(await ann.json('POST', `/cards/${explicit}/model`, { model_id: null }, 200)).toMatchObject({ model_id: null });
  });

  it('on a card without a model is a no-op that still answers the card', async () => {
    const card = await ann.json<CardJson>('POST', `/cards/${project.top_level_card_id}/children`, { title: 'plain' }, 201);
    expect(await ann.json('POST', `/cards/${card.id}/model`, {}, 200)).toMatchObject({ id: card.id, model_id: null });
  });

  it('still refuses a malformed model_id or another property with 400, changing nothing', async () => {
    const id = await cardWithModel('kept');
    for (const body of [{ model_id: 'abc' }, { model_id: 0 }, { other: 1 }]) {
      const res = await ann.call('POST', `/cards/${id}/model`, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect(await ann.json('GET', `/cards/${id}`, undefined, 200)).toMatchObject({ model_id: model });
  });
});
