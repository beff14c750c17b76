import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FIELD_TYPES, type FieldType } from '../../../src/modules/fields/domain/values/field-value.types.js';
import { as, type TestApp, type TestUser } from '../../support/test-app.js';
import { API, fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

/** One value of a type: what a client sends, and what a card then shows. */
interface Sample {
  value: unknown;
  shown: unknown;
}

/**
 * A value of every field type (a type added to FIELD_TYPES without one here
 * fails `tsc` and the first test). group_type values are grouping's: the
 * card joins the group instead of being sent a value.
 */
function samples(ann: TestUser, related: number, group: number): Record<FieldType, Sample> {
  return {
    text: { value: 'hello', shown: 'hello' },
    content: { value: '# Notes\n\n* item', shown: '# Notes\n\n* item' },
    number: { value: '42', shown: 42 },
    bool: { value: true, shown: true },
    date: { value: '2026-01-05', shown: '2026-01-05' },
    time: { value: '09:30:00', shown: '09:30:00' },
    members: { value: [ann.id], shown: [ann.id] },
    likes: { value: 1, shown: { score: 1, votes: { [String(ann.id)]: 1 } } },
    relationships: { value: [related], shown: [related] },
    files: { value: [{ name: 'a.txt', data: 'hi' }], shown: [expect.objectContaining({ name: 'a.txt', size: 2 })] },
    group_type: { value: group, shown: [group] },
  };
}

/**
 * One field of every type in FIELD_TYPES, each set and read back: a type
 * added without its migration (the CHECK on fields.attributes.type), its
 * reader or its writer fails here rather than in production (a 500).
 */
describe('every field type', () => {
  let t: TestApp, c: FieldsClient, w: World, ann: TestUser;
  let sample: Record<FieldType, Sample>;
  /** The field of each type, named after it. */
  const nameOf = (type: FieldType) => `Field ${type}`;

  beforeAll(async () => {
    ({ t, c, ann, w } = await fieldsWorld());
    const related = (await c.card(ann, w.root, 'related')).id;
    // A group type brings its group_type field; the card shows its groups' ids there.
    const type = await t.http.post(`${API}/projects/${w.project}/group-types`).set(as(ann)).send({ name: nameOf('group_type') }).expect(201);
    const group = await t.http.post(`${API}/cards/${w.root}/groups`).set(as(ann)).send({ type_id: type.body.id, title: 'G' }).expect(201);
    sample = samples(ann, related, group.body.id as number);
    for (const type of FIELD_TYPES) if (type !== 'group_type') await c.field(ann, w.project, nameOf(type), type);
  });
  afterAll(() => t.close());

  const valuesOf = (attributes: Record<string, unknown>) => Object.fromEntries(FIELD_TYPES.map((type) => [type, attributes[nameOf(type)]]));
  const shown = () => Object.fromEntries(FIELD_TYPES.map((type) => [type, sample[type].shown]));

  it('has a sample of each type, and GET /attribute-types lists exactly FIELD_TYPES', async () => {
    for (const type of FIELD_TYPES) expect([type, sample[type]]).toEqual([type, expect.objectContaining({ shown: expect.anything() })]);
    const listed = await t.http.get(`${API}/attribute-types`).set(as(ann)).expect(200);
    expect(listed.body.map((x: { type: string }) => x.type)).toEqual([...FIELD_TYPES]);
  });

  it('sets each type on a card one by one, and reads it back from the card and the listing', async () => {
    const card = (await c.card(ann, w.root, 'one by one')).id;
    for (const type of FIELD_TYPES) {
      if (type === 'group_type') {
        await t.http.post(`${API}/cards/${card}/add-to-group`).set(as(ann)).send({ group_id: sample.group_type.value }).expect(200);
      } else {
        const res = await c.set(ann, card, nameOf(type), sample[type].value);
        expect([type, res.status]).toEqual([type, 200]);
      }
    }
    expect(valuesOf((await c.get(ann, card)).attributes)).toEqual(shown());
    const listed = await t.http.get(`${API}/projects/${w.project}/cards`).set(as(ann)).expect(200);
    const inListing = (listed.body as Array<{ id: number; attributes: Record<string, unknown> }>).find((x) => x.id === card)!;
    expect(valuesOf(inListing.attributes)).toEqual(shown());
  });

  it('takes every type on a card creation', async () => {
    const attributes = Object.fromEntries(FIELD_TYPES.filter((type) => type !== 'group_type').map((type) => [nameOf(type), sample[type].value]));
    const res = await t.http
      .post(`${API}/cards/${w.root}/children`)
      .set(as(ann))
      .send({ title: 'created with all', attributes, group_id: sample.group_type.value })
      .expect(201);
    expect(valuesOf(res.body.attributes)).toEqual(shown());
    expect(valuesOf((await c.get(ann, res.body.id)).attributes)).toEqual(shown());
  });
});
