import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response, Test } from 'supertest';
import { as, createTestApp, type TestApp, type TestUser } from '../../support/test-app.js';

const API = '/api/1.0';
const NOT_UTF8 = 'must be valid UTF-8';

/** A multipart body built by hand, so a text part can carry any bytes. */
function multipart(parts: Array<{ name: string; value: Buffer | string; filename?: string }>): { type: string; body: Buffer } {
  const boundary = 'cardwork-utf8-boundary';
  const chunks = parts.flatMap(({ name, value, filename }) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n`),
    Buffer.from(filename ? 'Content-Type: application/octet-stream\r\n\r\n' : '\r\n'),
    Buffer.from(value),
    Buffer.from('\r\n'),
  ]);
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]) };
}

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

/** Sends `body` as it is: superagent would serialize a Buffer sent as JSON or as a form. */
const sendBytes = (req: Test, type: string, body: Buffer) => req.set('Content-Type', type).serialize((b) => b as string).send(body);

/**
 * Text whose bytes are not UTF-8 is refused with a 400 naming where it is,
 * whichever way the parameters come (DESIGN.md §2: JSON, form fields, query
 * string). Before, a JSON body's and a query's bytes became U+FFFD, a
 * multipart field's too, and a form field's escapes were stored as the
 * literal text `%ED%A0%80`.
 */
describe('text that is not UTF-8', () => {
  let t: TestApp;
  let ann: TestUser;
  let project: { id: number; top_level_card_id: number };
  let card: number;

  const children = async () =>
    (await t.http.get(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).expect(200)).body.map((c: { title: string }) => c.title);
  const notes = async () => (await t.http.get(`${API}/cards/${card}`).set(as(ann)).expect(200)).body.attributes.Notes;
  const expectRefused = (res: Response, field: string) =>
    expect({ status: res.status, type: res.headers['content-type'], errors: res.body.errors }).toEqual({
      status: 400,
      type: expect.stringMatching(/^application\/problem\+json/),
      errors: [{ field, message: NOT_UTF8 }],
    });

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user();
    const org = (await t.http.post(`${API}/organizations`).set(as(ann)).send({ name: 'o' }).expect(201)).body.id;
    project = (await t.http.post(`${API}/organizations/${org}/projects`).set(as(ann)).send({ title: 'p' }).expect(201)).body;
    card = (await t.http.post(`${API}/cards/${project.top_level_card_id}/children`).set(as(ann)).send({ title: 'first' }).expect(201)).body.id;
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Notes', type: 'text' }).expect(201);
    await t.http.post(`${API}/projects/${project.id}/attributes`).set(as(ann)).send({ name: 'Docs', type: 'files' }).expect(201);
  });
  afterAll(() => t.close());

  it('is a 400 naming the form field, where its escapes were stored as they were sent', async () => {
    const top = project.top_level_card_id;
    for (const escapes of ['%ED%A0%80', '%FF', '%C0%80', '%E2%82', 'ok%C3']) {
      expectRefused(await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).type('form').send(`title=${escapes}`), 'title');
      expectRefused(await t.http.post(`${API}/cards/${card}/attributes/Notes`).set(as(ann)).type('form').send(`value=${escapes}`), 'value');
      expectRefused(await t.http.post(`${API}/cards/${card}/attributes`).set(as(ann)).type('form').send(`Notes=${escapes}`), 'Notes');
    }
    // a name that does not decode is shown as the parser keys it
    expectRefused(await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).type('form').send('title=x&%FF=1'), '\uFFFD');
    // raw bytes in a form body: the body is named
    expectRefused(await sendBytes(t.http.post(`${API}/cards/${top}/children`).set(as(ann)), 'application/x-www-form-urlencoded', bytes('title=', [0xff])), '(body)');
    expect(await children()).toEqual(['first']);
    expect(await notes()).toBeNull();
  });

  it('is a 400 naming the query parameter, where it was read as U+FFFD', async () => {
    const top = project.top_level_card_id;
    expectRefused(await t.http.post(`${API}/cards/${top}/children?title=%ED%A0%80`).set(as(ann)), 'title');
    expectRefused(await t.http.post(`${API}/cards/${card}/attributes/Notes?value=%FF`).set(as(ann)), 'value');
    expectRefused(await t.http.get(`${API}/projects/${project.id}/cards?filter=%FF`).set(as(ann)), 'filter');
    expectRefused(await t.http.get(`${API}/search?filter=ok&filters=%C0%80`).set(as(ann)), 'filters');
    // refused even where the query is not read (a body was sent)
    expectRefused(await t.http.post(`${API}/cards/${top}/children?x=%FF`).set(as(ann)).send({ title: 'json' }), 'x');
    expect(await children()).toEqual(['first']);
    expect(await notes()).toBeNull();
  });

  it('is a 400 naming the body for a JSON body, where it was read as U+FFFD', async () => {
    const top = project.top_level_card_id;
    for (const bad of [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0x80], [0xe2, 0x82]]) {
      const body = bytes('{"title":"', bad, '"}');
      expectRefused(await sendBytes(t.http.post(`${API}/cards/${top}/children`).set(as(ann)), 'application/json', body), '(body)');
      const value = bytes('{"value":"', bad, '"}');
      expectRefused(await sendBytes(t.http.post(`${API}/cards/${card}/attributes/Notes`).set(as(ann)), 'application/json', value), '(body)');
    }
    expect(await children()).toEqual(['first']);
    expect(await notes()).toBeNull();
  });

  it('is a 400 naming the multipart text field, with or without an upload, where it was read as U+FFFD', async () => {
    const top = project.top_level_card_id;
    const fields = multipart([{ name: 'title', value: bytes('x', [0xff]) }]);
    expectRefused(await t.http.post(`${API}/cards/${top}/children`).set(as(ann)).set('Content-Type', fields.type).send(fields.body), 'title');
    const value = multipart([{ name: 'value', value: bytes([0xed, 0xa0, 0x80]) }]);
    expectRefused(await t.http.post(`${API}/cards/${card}/attributes/Notes`).set(as(ann)).set('Content-Type', value.type).send(value.body), 'value');
    const upload = multipart([
      { name: 'value', value: Buffer.from([0xff, 0xfe]), filename: 'a.bin' },
      { name: 'note', value: bytes([0xc0, 0x80]) },
    ]);
    expectRefused(await t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(ann)).set('Content-Type', upload.type).send(upload.body), 'note');
    expect(await children()).toEqual(['first']);
    expect(await notes()).toBeNull();
  });

  it('takes UTF-8 every way, U+FFFD sent as such, a lone %, a form declared ISO-8859-1, and files of any bytes', async () => {
    const top = project.top_level_card_id;
    const post = () => t.http.post(`${API}/cards/${top}/children`).set(as(ann));
    const titles = [
      (await post().type('form').send('title=%C3%A9t%C3%A9+%F0%9F%9A%80').expect(201)).body.title,
      (await post().type('form').send('title=100%').expect(201)).body.title,
      (await post().set('Content-Type', 'application/x-www-form-urlencoded; charset=iso-8859-1').send('title=caf%E9').expect(201)).body.title,
      (await t.http.post(`${API}/cards/${top}/children?title=%EF%BF%BD%C3%A9`).set(as(ann)).expect(201)).body.title,
      (await post().type('form').send('title=%EF%BF%BD').expect(201)).body.title,
      (await sendBytes(post(), 'application/json', bytes('{"title":"', [0xef, 0xbf, 0xbd], '"}')).expect(201)).body.title,
    ];
    const fields = multipart([{ name: 'title', value: '\uFFFD multipart ✓' }]);
    titles.push((await post().set('Content-Type', fields.type).send(fields.body).expect(201)).body.title);
    expect(titles).toEqual(['été 🚀', '100%', 'café', '\uFFFDé', '\uFFFD', '\uFFFD', '\uFFFD multipart ✓']);

    const content = Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0, 0x80, 0x00, 0xef, 0xbf, 0xbd]);
    const upload = multipart([{ name: 'value', value: content, filename: 'bytes.bin' }]);
    const stored = await t.http.post(`${API}/cards/${card}/attributes/Docs/append`).set(as(ann)).set('Content-Type', upload.type).send(upload.body).expect(200);
    const [file] = stored.body.attributes.Docs as Array<{ url: string; size: number }>;
    const got = await t.http
      .get(new URL(file.url).pathname)
      .set(as(ann))
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(Buffer.compare(got.body as Buffer, content)).toBe(0);
    const text = multipart([{ name: 'value', value: 'notes ✓ \uFFFD' }]);
    await t.http.post(`${API}/cards/${card}/attributes/Notes`).set(as(ann)).set('Content-Type', text.type).send(text.body).expect(200);
    expect(await notes()).toBe('notes ✓ \uFFFD');
  });

  it('leaves the OAuth token endpoint its own answers (RFC 6749 JSON)', async () => {
    const res = await t.http.post('/oauth/token?x=%FF').type('form').send('grant_type=authorization_code&code=%FF&client_id=%ED%A0%80');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.error).toEqual(expect.any(String));
  });
});
