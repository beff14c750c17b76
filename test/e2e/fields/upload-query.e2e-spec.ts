import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

/**
 * DESIGN.md §2 reads the query string only when there is no body, and a
 * multipart upload is a body: a query parameter beside a files value's
 * upload (set, append) would be ignored, so it is a 400 naming it, as an
 * unknown parameter is everywhere else; nothing is stored. (Discover: the
 * import e2e suite.)
 */
describe('a query string beside a files value upload', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser;
  let card: number;

  beforeAll(async () => {
    let w: World;
    ({ t, c, ann, w } = await fieldsWorld());
    await c.field(ann, w.project, 'Docs', 'files');
    card = (await c.card(ann, w.root, 'uploads')).id;
  });
  afterAll(() => t.close());

  const fileRows = async () => Number((await t.app.get(DataSource).query(`SELECT count(*) AS n FROM fields.files`))[0].n);

  it('is a 400 naming each parameter, on set and append, with a file or a URL as the part; nothing is stored', async () => {
    const rows = await fileRows();
    const message = 'the query string is not read beside a multipart upload (its parameters are its form parts)';
    for (const route of [`/cards/${card}/attributes/Docs`, `/cards/${card}/attributes/Docs/append`]) {
      const file = await t.http.post(`${API}${route}?name=x.txt`).set(as(ann)).attach('value', Buffer.from('bytes'), 'f.txt').expect(400);
      expect(file.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(file.body.errors).toEqual([{ field: 'name', message }]);
      const url = await t.http.post(`${API}${route}?bogus=1&other=2`).set(as(ann)).field('value', 'http://127.0.0.1:1/a.txt').expect(400);
      expect(url.body.errors).toEqual([
        { field: 'bogus', message },
        { field: 'other', message },
      ]);
    }
    expect(await fileRows()).toBe(rows);
    expect((await c.get(ann, card)).attributes.Docs).toEqual([]);
    // Without the query the same upload is taken.
    await t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(ann)).attach('value', Buffer.from('bytes'), 'f.txt').expect(200);
    expect(await fileRows()).toBe(rows + 1);
  });
});
