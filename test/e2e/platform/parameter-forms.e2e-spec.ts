import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

// DESIGN.md §2: parameters as a JSON body, form fields or the query string.
describe('request parameter forms', () => {
  let t: TestApp;
  let u: TestUser;
  let project: { id: number; top_level_card_id: number };

  beforeAll(async () => {
    t = await createTestApp();
    u = await t.user();
    const org = (await t.http.post('/api/1.0/organizations').set(as(u)).send({ name: 'o' }).expect(201)).body;
    project = (await t.http.post(`/api/1.0/organizations/${org.id}/projects`).set(as(u)).send({ title: 'p' }).expect(201)).body;
  });
  afterAll(() => t.close());

  it('takes the same parameters from JSON, form fields and the query string', async () => {
    const top = project.top_level_card_id;
    const json = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send({ title: 'json' }).expect(201);
    const form = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).type('form').send({ title: 'form' }).expect(201);
    const query = await t.http.post(`/api/1.0/cards/${top}/children`).query({ title: 'query' }).set(as(u)).expect(201);
    expect([json.body.title, form.body.title, query.body.title]).toEqual(['json', 'form', 'query']);

    const closed = await t.http.post(`/api/1.0/cards/${query.body.id}/state`).query({ state: 'closed' }).set(as(u)).expect(200);
    expect(closed.body.state).toBe('closed');
    const moved = await t.http
      .post(`/api/1.0/cards/${query.body.id}/relocate`)
      .query({ parent_id: String(json.body.id) })
      .set(as(u))
      .expect(200);
    expect(moved.body.parent_id).toBe(json.body.id);
  });

  /**
   * A read takes its parameters from the body when one is sent, as a write
   * does: the query string only when there is no body. A listing used to
   * check such a body for bad text and then list as if none had been sent.
   */
  it('reads the parameters of a GET from its JSON or form body when one is sent, and then not the query string', async () => {
    const top = project.top_level_card_id;
    const wanted = (await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send({ title: 'needle in a body' }).expect(201)).body.id;
    await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send({ title: 'hay' }).expect(201);
    const listing = `/api/1.0/projects/${project.id}/cards`;
    const json = await t.http.get(listing).set(as(u)).send({ filter: 'needle', only_ids: true, per_page: 10 }).expect(200);
    const form = await t.http.get(listing).set(as(u)).type('form').send({ filters: 'needle', only_ids: 'true' }).expect(200);
    const both = await t.http.get(listing).query({ filter: 'hay' }).set(as(u)).send({ filter: 'needle', only_ids: true }).expect(200);
    expect([json.body, form.body, both.body]).toEqual([[wanted], [wanted], [wanted]]);
    // Its next page is linked with those parameters in the URL, where a link carries them.
    const paged = await t.http.get(listing).query({ filter: 'x' }).set(as(u)).send({ filter: 'needle or hay', per_page: 1 }).expect(200);
    const next = new URL(/^<([^>]+)>; rel="next"$/.exec(paged.headers.link)![1]);
    // (by cursor: the card listings link their next page so)
    expect(Object.fromEntries(next.searchParams)).toEqual({ filter: 'needle or hay', per_page: '1', cursor: paged.headers['x-service-nextcursor'] });
    // What a query would refuse, a body does too, naming the parameter.
    const unknown = await t.http.get(listing).set(as(u)).send({ filter: 'needle', color: 'red' }).expect(400);
    expect(unknown.body.errors).toEqual([{ field: 'color', message: 'property color should not exist' }]);
    const badPage = await t.http.get(listing).set(as(u)).send({ page: 0 }).expect(400);
    expect(badPage.body.errors).toEqual([expect.objectContaining({ field: 'page' })]);
    const nested = await t.http.get(listing).set(as(u)).send({ filter: { x: 1 } });
    const notObject = await t.http.get(listing).set(as(u)).set('Content-Type', 'application/json').send('[1]');
    expect([nested.status, notObject.status]).toEqual([400, 400]);
    // A listing that takes no parameters refuses a body that names one, as it refuses them in the query.
    await t.http.get('/api/1.0/me/api-keys').set(as(u)).send({ page: 2 }).expect(400);
    await t.http.get('/api/1.0/me/api-keys').set(as(u)).send({}).expect(200);
  });

  it("takes a new card's attributes as bracketed multipart fields, names like constructor included", async () => {
    const top = project.top_level_card_id;
    for (const name of ['Estimate', 'constructor']) {
      await t.http.post(`/api/1.0/projects/${project.id}/attributes`).set(as(u)).send({ name, type: 'number' }).expect(201);
    }
    const made = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'multipart').field('attributes[Estimate]', '5').field('attributes[constructor]', '6').expect(201);
    expect(made.body.attributes).toEqual({ Estimate: 5, constructor: 6 });
    const bad = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'bad').field('attributes[constructor]', 'many').expect(400);
    expect(JSON.stringify(bad.body.errors)).toContain('constructor');
  });

  it("takes a new card's attributes in a form as one field of JSON text, as the importer takes its mapping", async () => {
    const top = project.top_level_card_id;
    const form = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).type('form').send({ title: 'form json', attributes: '{"Estimate": 7, "constructor": 8}' }).expect(201);
    expect(form.body.attributes).toEqual({ Estimate: 7, constructor: 8 });
    for (const attributes of ['{"Estimate": ', '[1, 2]', 'Estimate=7', `{"a":${'['.repeat(70)}${']'.repeat(70)}}`]) {
      const refused = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).type('form').send({ title: 'refused', attributes }).expect(400);
      expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'attributes' })]);
    }
    const titles = ((await t.http.get(`/api/1.0/cards/${top}/children`).set(as(u)).expect(200)).body as { title: string }[]).map((c) => c.title);
    expect(titles).not.toContain('refused');
  });

  it('reads a negative number in the query or a form as a number (a position clamped to first), and one past the safe integers (clamped to last)', async () => {
    const top = project.top_level_card_id;
    const card = (await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send({ title: 'placed' }).expect(201)).body;
    const query = await t.http.post(`/api/1.0/cards/${card.id}/relocate`).query({ position: '-1' }).set(as(u)).expect(200);
    expect(query.body.position).toBe(0);
    await t.http.post(`/api/1.0/cards/${card.id}/relocate`).query({ position: '9' }).set(as(u)).expect(200);
    const form = await t.http.post(`/api/1.0/cards/${card.id}/relocate`).set(as(u)).type('form').send({ position: '-1' }).expect(200);
    expect(form.body.position).toBe(0);
    await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send({ title: 'after' }).expect(201);
    const last = (await t.http.post(`/api/1.0/cards/${card.id}/relocate`).query({ position: '9' }).set(as(u)).expect(200)).body.position;
    await t.http.post(`/api/1.0/cards/${card.id}/relocate`).query({ position: '0' }).set(as(u)).expect(200);
    const huge = await t.http.post(`/api/1.0/cards/${card.id}/relocate`).set(as(u)).type('form').send({ position: '9007199254740993' }).expect(200);
    expect([last > 0, huge.body.position]).toEqual([true, last]);
    const exponent = await t.http.post(`/api/1.0/cards/${card.id}/relocate`).set(as(u)).type('form').send({ position: '1e20' }).expect(400);
    expect(exponent.body.errors).toEqual([expect.objectContaining({ field: 'position' })]);
  });

  it('takes multipart form fields as the body where the route takes no file', async () => {
    const top = project.top_level_card_id;
    const made = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'multipart ✓').expect(201);
    expect(made.body.title).toBe('multipart ✓');
    const moved = await t.http.post(`/api/1.0/cards/${made.body.id}/relocate`).set(as(u)).field('parent_id', String(top)).field('position', '0').expect(200);
    expect(moved.body.position).toBe(0);
    // validated like any body: an unknown property, a bad value, a NUL
    const unknown = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'x').field('color', 'red').expect(400);
    expect(unknown.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'color' })]));
    const fractional = await t.http.post(`/api/1.0/cards/${made.body.id}/relocate`).set(as(u)).field('position', '1.5').expect(400);
    expect(fractional.body.errors).toEqual([expect.objectContaining({ field: 'position' })]);
    await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'a\u0000b').expect(400);
    // Bracketed names nest (`a[b]`). `__proto__` and `constructor` are unknown properties like any
    // other (400), from JSON and forms alike. Neither pollutes anything.
    const protoJson = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send(JSON.parse('{"title":"json","__proto__":{"polluted":"yes"}}'));
    const protoForm = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'form').field('__proto__[polluted]', 'yes');
    for (const res of [protoJson, protoForm]) {
      expect([res.status, res.body.errors]).toEqual([400, [{ field: '__proto__', message: 'property __proto__ should not exist' }]]);
    }
    const ctorJson = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send(JSON.parse('{"title":"json","constructor":{"prototype":{"polluted":"yes"}}}'));
    const ctorForm = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'form').field('constructor[prototype][polluted]', 'yes');
    for (const res of [ctorJson, ctorForm]) {
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'constructor', message: 'property constructor should not exist' }]);
    }
    // So is every name of Object.prototype's members, which validation never saw (they passed unread).
    for (const name of ['constructor', 'valueOf', 'toString', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf', '__proto__']) {
      const query = await t.http.get(`/api/1.0/projects/${project.id}/cards?${name}=1`).set(as(u));
      expect([name, query.status, query.body.errors]).toEqual([name, 400, [{ field: name, message: `property ${name} should not exist` }]]);
    }
    const valueOfJson = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).send({ title: 'json', valueOf: 1 });
    expect([valueOfJson.status, valueOfJson.body.errors]).toEqual([400, [{ field: 'valueOf', message: 'property valueOf should not exist' }]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a file, a malformed form and more than 1 MiB of fields on a route that takes no file, creating nothing', async () => {
    const top = project.top_level_card_id;
    const count = async () => (await t.http.get(`/api/1.0/cards/${top}/children`).set(as(u)).expect(200)).body.length;
    const before = await count();
    const file = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'x').attach('title', Buffer.from('data'), 'x.txt').expect(400);
    expect(file.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(file.body.errors).toEqual([{ field: 'title', message: 'this request takes no file; send its parameters as text fields' }]);
    const malformed = await t.http
      .post(`/api/1.0/cards/${top}/children`)
      .set(as(u))
      .set('Content-Type', 'multipart/form-data; boundary=XYZ')
      .send('--XYZ\r\nContent-Disposition: form-data; name="title"\r\n\r\nunfinished')
      .expect(400);
    expect(malformed.headers['content-type']).toMatch(/application\/problem\+json/);
    const huge = await t.http.post(`/api/1.0/cards/${top}/children`).set(as(u)).field('title', 'x'.repeat(1024 * 1024 + 10)).expect(413);
    expect(huge.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(await count()).toBe(before);
  });

  it('validates the query form like a body, and lets a sent body win', async () => {
    const top = project.top_level_card_id;
    const bad = await t.http.post(`/api/1.0/cards/${top}/children`).query({ title: 'x', color: 'red' }).set(as(u)).expect(400);
    expect(bad.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'color' })]));
    const both = await t.http.post(`/api/1.0/cards/${top}/children`).query({ title: 'ignored' }).set(as(u)).send({ title: 'body' }).expect(201);
    expect(both.body.title).toBe('body');
  });
});
