/**
 * Random worlds and random filters for the filter differential test: a few
 * projects of one team with cards in a tree, fields of every type (project
 * and model fields, the same name with different types across projects),
 * values, votes, files, groups and memberships; and filter texts drawn from
 * the whole grammar, with values that fit, and some that do not.
 */
import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { CARD_STATES } from '../../../src/modules/card-hierarchy/index.js';
import type { FilterField } from '../../../src/modules/fields/index.js';
import type { World, WorldCard, WorldUser } from '../../../src/modules/cards/filter/reference-evaluator.test-support.js';

export const TODAY = '2026-03-15';

type Gen = fc.GeneratorValue;
type FieldType = FilterField['type'];

/** Field names of every world, each with the type it usually has. */
const FIELD_POOL: Array<[string, FieldType, FilterField['options']?]> = [
  ['Notes', 'text'],
  ['Body', 'content'],
  ['Estimate', 'number'],
  ['Done', 'bool'],
  ['Due', 'date'],
  ['Meeting', 'date', { time: true }],
  ['Sprint', 'date', { period: true }],
  ['At', 'time'],
  ['Owners', 'members'],
  ['Blocks', 'relationships'],
  ['Likes', 'likes'],
  ['Docs', 'files'],
  ['Status', 'group_type'],
  ['Due date', 'date'],
];
const OTHER_TYPES: FieldType[] = ['text', 'number', 'bool', 'date', 'members'];
const WORDS = ['alpha', 'Beta', 'gamma', 'DELTA', 'é', 'École', '50%', 'a_b', 'x\\y', 'in', 'Or', 'ΟΔΟΣ', 'οδος', 'σς'];
const GROUP_TITLES = ['Todo', 'Doing', 'Done', 'todo list', 'Ready 2'];
const FILE_NAMES = ['spec.pdf', 'Notes.TXT', 'a_b.png'];
const NUMBERS = [-2, 0, 1, 1.5, 3, 10, 100];
const TIMES = ['08:00:00', '09:30:00', '12:00:00', '17:45:10'];

function day(offset: number): string {
  const d = new Date(`${TODAY}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + offset);
  return d.toISOString().slice(0, 10);
}

export interface GeneratedWorld {
  world: World;
  organizationId: number;
  projectIds: number[];
}

/** A world whose ids all start at `base` (so worlds of one database never collide). */
export function generateWorld(g: Gen, base: number, users: WorldUser[]): GeneratedWorld {
  let next = base;
  const id = () => ++next;
  const w: World = {
    users,
    cards: [],
    fields: [],
    models: [],
    scalars: [],
    members: [],
    relationships: [],
    votes: [],
    files: [],
    groups: [],
    memberships: [],
  };
  const organizationId = id();
  const projectIds: number[] = [];
  const projects = g(fc.integer, { min: 1, max: 3 });
  for (let p = 0; p < projects; p++) {
    const projectId = id();
    projectIds.push(projectId);
    const models = ['Bug', 'Task'].map((name) => ({ id: id(), projectId, name }));
    w.models.push(...models);
    const fields = generateFields(g, projectId, models.map((m) => m.id), id);
    w.fields.push(...fields);
    const cards = generateCards(g, projectId, models.map((m) => m.id), id);
    w.cards.push(...cards);
    const groups = fields
      .filter((f) => f.type === 'group_type')
      .flatMap((f) => GROUP_TITLES.filter(() => g(fc.boolean)).map((title) => ({ id: id(), typeId: f.groupTypeId!, projectId, title })));
    w.groups.push(...groups);
    generateValues(g, w, fields, cards, groups, users);
  }
  // Relationships may point into the other projects of the team: refs are per project.
  for (const f of w.fields.filter((x) => x.type === 'relationships')) {
    for (const card of w.cards.filter((c) => c.projectId === f.projectId && c.depth > 0)) {
      const targets = w.cards.filter((c) => c.id !== card.id && g(fc.integer, { min: 0, max: 9 }) === 0);
      for (const t of targets) w.relationships.push({ cardId: card.id, fieldId: f.id, targetId: t.id });
    }
  }
  return { world: w, organizationId, projectIds };
}

function generateFields(g: Gen, projectId: number, modelIds: number[], id: () => number): FilterField[] {
  const fields: FilterField[] = [];
  for (const [name, usual, options] of FIELD_POOL) {
    const place = g(fc.constantFrom, 'absent', 'project', 'project', 'project', 'model', 'both models');
    if (place === 'absent') continue;
    const type = usual === 'group_type' || g(fc.integer, { min: 0, max: 7 }) > 0 ? usual : g(fc.constantFrom, ...OTHER_TYPES);
    const make = (modelId: number | null): FilterField => ({
      id: id(),
      projectId,
      modelId,
      name: g(fc.boolean) ? name : name.toLowerCase(),
      type,
      options: type === usual ? { time: options?.time ?? false, period: options?.period ?? false } : { time: false, period: false },
      groupTypeId: null,
    });
    // group_type fields are project fields (a database rule).
    if (place === 'project' || type === 'group_type') fields.push(make(null));
    else if (place === 'model') fields.push(make(g(fc.constantFrom, ...modelIds)));
    else fields.push(...modelIds.map(make));
  }
  for (const f of fields) if (f.type === 'group_type') f.groupTypeId = id();
  return fields;
}

function generateCards(g: Gen, projectId: number, modelIds: number[], id: () => number): WorldCard[] {
  const stamp = () => new Date(Date.parse(`${day(g(fc.integer, { min: -40, max: 40 }))}T00:00:00Z`) + g(fc.integer, { min: 0, max: 86_399 }) * 1000);
  const top: WorldCard = {
    id: id(),
    projectId,
    parentId: null,
    ref: 0,
    depth: 0,
    title: 'Project',
    state: 'undecided',
    isArchived: false,
    hidden: false,
    modelId: null,
    createdAt: stamp(),
    updatedAt: stamp(),
  };
  const cards = [top];
  const n = g(fc.integer, { min: 2, max: 24 });
  for (let i = 1; i <= n; i++) {
    const parent = cards[g(fc.integer, { min: 0, max: cards.length - 1 })];
    const isArchived = g(fc.integer, { min: 0, max: 9 }) === 0;
    const words = g(fc.array, fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 });
    cards.push({
      id: id(),
      projectId,
      parentId: parent.id,
      ref: i,
      depth: parent.depth + 1,
      title: words.join(' '),
      state: g(fc.constantFrom, ...CARD_STATES),
      isArchived,
      hidden: isArchived || parent.hidden,
      modelId: g(fc.constantFrom, null, null, ...modelIds),
      createdAt: stamp(),
      updatedAt: stamp(),
    });
  }
  return cards;
}

function generateValues(
  g: Gen,
  w: World,
  fields: FilterField[],
  cards: WorldCard[],
  groups: World['groups'],
  users: WorldUser[],
): void {
  const some = <T>(items: T[]) => items.filter(() => g(fc.integer, { min: 0, max: 2 }) === 0);
  const date = (time: boolean) => {
    const d = day(g(fc.integer, { min: -40, max: 40 }));
    return time && g(fc.boolean) ? `${d}T${g(fc.constantFrom, ...TIMES)}` : d;
  };
  // Values also go to fields the card does not use (another model's): a card
  // keeps them, and the filter must not see them.
  for (const card of cards.filter((c) => c.depth > 0)) {
    for (const f of fields) {
      if (!g(fc.boolean)) continue;
      switch (f.type) {
        case 'text':
        case 'content':
          w.scalars.push({ cardId: card.id, fieldId: f.id, value: g(fc.array, fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }).join(' ') });
          break;
        case 'number':
          w.scalars.push({ cardId: card.id, fieldId: f.id, value: g(fc.constantFrom, ...NUMBERS) });
          break;
        case 'bool':
          w.scalars.push({ cardId: card.id, fieldId: f.id, value: g(fc.boolean) });
          break;
        case 'date': {
          if (!f.options.period) {
            w.scalars.push({ cardId: card.id, fieldId: f.id, value: date(!!f.options.time) });
            break;
          }
          const [start, end] = [date(false), date(false)].sort();
          w.scalars.push({ cardId: card.id, fieldId: f.id, value: { start, end } });
          break;
        }
        case 'time':
          w.scalars.push({ cardId: card.id, fieldId: f.id, value: g(fc.constantFrom, ...TIMES) });
          break;
        case 'members':
          for (const u of some(users)) w.members.push({ cardId: card.id, fieldId: f.id, userId: u.id });
          break;
        case 'likes':
          for (const u of some(users)) w.votes.push({ cardId: card.id, fieldId: f.id, userId: u.id, vote: g(fc.constantFrom, 1, -1) });
          break;
        case 'files':
          for (const name of some(FILE_NAMES)) w.files.push({ cardId: card.id, fieldId: f.id, name });
          break;
        case 'group_type':
          for (const group of some(groups.filter((x) => x.typeId === f.groupTypeId))) w.memberships.push({ cardId: card.id, groupId: group.id });
          break;
      }
    }
  }
}

/** Writes a world straight into the modules' tables (test set-up only), in a few statements. */
export async function insertWorld(ds: DataSource, gw: GeneratedWorld, creatorId: number): Promise<void> {
  const { world: w } = gw;
  const rows = (sql: string, data: unknown[]) => (data.length ? ds.query(sql, [JSON.stringify(data)]) : Promise.resolve());
  await ds.query(`INSERT INTO workspace.organizations (id, name, created_by) VALUES ($1, 'World', $2)`, [gw.organizationId, creatorId]);
  await rows(
    `INSERT INTO workspace.projects (id, organization_id, title, created_by)
     SELECT id, org, 'P', creator FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, org bigint, creator bigint)`,
    gw.projectIds.map((id) => ({ id, org: gw.organizationId, creator: creatorId })),
  );
  const ancestors = new Map<number, number[]>();
  for (const c of w.cards) ancestors.set(c.id, c.parentId === null ? [] : [...ancestors.get(c.parentId)!, c.parentId]);
  await rows(
    `INSERT INTO cards.cards (id, project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, state,
                              is_archived, hidden, position, model_id, created_at, updated_at)
     SELECT id, project_id, org, parent_id, ARRAY(SELECT jsonb_array_elements_text(ancestors)::bigint), depth, ref, title, state,
            is_archived, hidden, ref, model_id, created_at, updated_at
       FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, project_id bigint, org bigint, parent_id bigint, ancestors jsonb,
            depth int, ref int, title text, state text, is_archived boolean, hidden boolean, model_id bigint,
            created_at timestamptz, updated_at timestamptz)`,
    w.cards.map((c) => ({
      id: c.id,
      project_id: c.projectId,
      org: gw.organizationId,
      parent_id: c.parentId,
      ancestors: ancestors.get(c.id),
      depth: c.depth,
      ref: c.ref,
      title: c.title,
      state: c.state,
      is_archived: c.isArchived,
      hidden: c.hidden,
      model_id: c.modelId,
      created_at: c.createdAt.toISOString(),
      updated_at: c.updatedAt.toISOString(),
    })),
  );
  await rows(
    `INSERT INTO fields.models (id, project_id, name) SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, "projectId" bigint, name text)`,
    w.models,
  );
  await rows(
    `INSERT INTO fields.attributes (id, project_id, model_id, name, type, options, group_type_id)
     SELECT id, "projectId", "modelId", name, type, options, "groupTypeId"
       FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, "projectId" bigint, "modelId" bigint, name text, type text,
            options jsonb, "groupTypeId" bigint)`,
    w.fields,
  );
  await rows(
    `INSERT INTO grouping.group_types (id, project_id, organization_id, name)
     SELECT id, project_id, org, name FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, project_id bigint, org bigint, name text)`,
    w.fields
      .filter((f) => f.groupTypeId !== null)
      .map((f) => ({ id: f.groupTypeId, project_id: f.projectId, org: gw.organizationId, name: f.name })),
  );
  const topLevel = new Map(w.cards.filter((c) => c.depth === 0).map((c) => [c.projectId, c.id]));
  await rows(
    `INSERT INTO grouping.groups (id, type_id, project_id, organization_id, card_id, title, position)
     SELECT id, type_id, project_id, org, card_id, title, position FROM jsonb_to_recordset($1::jsonb)
         AS x(id bigint, type_id bigint, project_id bigint, org bigint, card_id bigint, title text, position int)`,
    w.groups.map((x, i) => ({ ...x, type_id: x.typeId, project_id: x.projectId, org: gw.organizationId, card_id: topLevel.get(x.projectId), position: i })),
  );
  const typeOf = new Map(w.groups.map((x) => [x.id, x.typeId]));
  await rows(
    `INSERT INTO grouping.memberships (card_id, group_id, type_id, position)
     SELECT card_id, group_id, type_id, position FROM jsonb_to_recordset($1::jsonb)
         AS x(card_id bigint, group_id bigint, type_id bigint, position int)`,
    w.memberships.map((m) => ({
      card_id: m.cardId,
      group_id: m.groupId,
      type_id: typeOf.get(m.groupId),
      position: w.memberships.filter((o) => o.groupId === m.groupId).indexOf(m),
    })),
  );
  await rows(
    `INSERT INTO fields.scalar_values (card_id, attribute_id, value)
     SELECT card_id, field_id, value FROM jsonb_to_recordset($1::jsonb) AS x(card_id bigint, field_id bigint, value jsonb)`,
    w.scalars.map((s) => ({ card_id: s.cardId, field_id: s.fieldId, value: s.value })),
  );
  await rows(
    `INSERT INTO fields.member_values (card_id, attribute_id, user_id, position)
     SELECT card_id, field_id, user_id, row_number() OVER () FROM jsonb_to_recordset($1::jsonb) AS x(card_id bigint, field_id bigint, user_id bigint)`,
    w.members.map((m) => ({ card_id: m.cardId, field_id: m.fieldId, user_id: m.userId })),
  );
  await rows(
    `INSERT INTO fields.relationship_values (card_id, attribute_id, target_card_id, position)
     SELECT card_id, field_id, target_id, row_number() OVER () FROM jsonb_to_recordset($1::jsonb) AS x(card_id bigint, field_id bigint, target_id bigint)`,
    w.relationships.map((r) => ({ card_id: r.cardId, field_id: r.fieldId, target_id: r.targetId })),
  );
  await rows(
    `INSERT INTO fields.like_votes (card_id, attribute_id, user_id, vote)
     SELECT card_id, field_id, user_id, vote FROM jsonb_to_recordset($1::jsonb) AS x(card_id bigint, field_id bigint, user_id bigint, vote smallint)`,
    w.votes.map((v) => ({ card_id: v.cardId, field_id: v.fieldId, user_id: v.userId, vote: v.vote })),
  );
  await rows(
    `INSERT INTO fields.files (organization_id, project_id, card_id, attribute_id, position, name, size, mime_type, storage_key)
     SELECT org, project_id, card_id, field_id, row_number() OVER (), name, 1, 'text/plain', 'k' || gen_random_uuid()
       FROM jsonb_to_recordset($1::jsonb) AS x(org bigint, project_id bigint, card_id bigint, field_id bigint, name text)`,
    w.files.map((f) => ({
      org: gw.organizationId,
      project_id: w.cards.find((c) => c.id === f.cardId)!.projectId,
      card_id: f.cardId,
      field_id: f.fieldId,
      name: f.name,
    })),
  );
}

/** Field names as a filter may write them: any case, braced or bare, and one that does not exist. */
function fieldName(g: Gen): string {
  const builtin = ['state', 'title', 'ref', 'hlevel', 'model', 'archived', 'created', 'updated', 'parent'];
  const pick = g(fc.integer, { min: 0, max: 9 });
  if (pick < 3) {
    const b = g(fc.constantFrom, ...builtin);
    return g(fc.boolean) ? b : b.toUpperCase();
  }
  if (pick === 3) return g(fc.constantFrom, 'Nope', '{No such}');
  const [name] = g(fc.constantFrom, ...FIELD_POOL);
  const cased = g(fc.constantFrom, name, name.toLowerCase(), name.toUpperCase());
  return name.includes(' ') || g(fc.boolean) ? `{${cased}}` : cased;
}

const quote = (s: string) => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;

function value(g: Gen): string {
  return g(
    fc.constantFrom,
    ...NUMBERS.map(String),
    'abc',
    '1e1',
    'today',
    '-7d',
    '+2w',
    '-1m',
    '+1y',
    '-30d',
    TODAY,
    '2026-03-01',
    '2026-02-30',
    'true',
    'false',
    'no',
    ...CARD_STATES,
    '08:00',
    '12:00:00',
    '25:00',
    '@ann',
    '@me',
    '@{Ann Lee}',
    '@{cat}',
    '@nobody',
    ...GROUP_TITLES.map((t) => (t.includes(' ') ? quote(t) : t)),
    ...FILE_NAMES,
    'spec',
    'Bug',
    'task',
    '0',
    '2',
    '5',
    '#3',
    ...WORDS.map(quote),
    'alpha',
    'TODO',
  );
}

function leaf(g: Gen): string {
  switch (g(fc.integer, { min: 0, max: 9 })) {
    case 0:
      return g(fc.constantFrom, 'alpha', 'beta', 'É', '50%', 'a_b', 'zzz', quote('alpha beta'), quote('x\\y'), quote('in'), 'οδος', 'ΟΔΟΣ', 'σ');
    case 1:
      return `#${g(fc.integer, { min: 0, max: 12 })}`;
    case 2:
      return g(fc.constantFrom, '#Todo', '#todo', '#{todo list}', '#Nope', '#{Ready 2}');
    case 3:
      return g(fc.constantFrom, '@ann', '@me', '@{Ann Lee}', '@{cat}', '@nobody', '@BOB');
    case 4:
      return `${value(g)} in ${fieldName(g)}`;
    case 5:
    case 6:
    case 7:
      return fittingComparison(g);
    default:
      return `${fieldName(g)} ${g(fc.constantFrom, '=', '!=', '>', '>=', '<', '<=', '~=')} ${value(g)}`;
  }
}

/** Values that suit a field of the pool or a builtin, so most comparisons are well-formed. */
const FITTING: Record<string, string[]> = {
  text: ['alpha', 'BETA', '"a_b"', '"50%"', '"x\\y"', 'é', '"gamma é"'],
  content: ['alpha', 'École', '"in"'],
  number: NUMBERS.map(String),
  bool: ['true', 'false', 'yes', '0'],
  date: ['today', '-7d', '+2w', '-1m', '2026-03-01', '-30d', '+10d', TODAY],
  time: ['08:00', '09:30:00', '12:00:00', '17:45:10'],
  members: ['@ann', '@me', '@{Ann Lee}', '@{cat}', '@dan'],
  relationships: ['1', '2', '3', '5', '#4'],
  likes: ['-1', '0', '1', '2'],
  files: ['spec.pdf', '"notes.txt"', 'a_b', 'spec'],
  group_type: ['Todo', 'doing', '"todo list"', 'Do'],
  state: [...CARD_STATES],
  title: ['alpha', '"alpha beta"', 'É', '"50%"'],
  ref: ['0', '1', '3', '7'],
  hlevel: ['1', '2', '3'],
  model: ['Bug', 'task', 'Nope'],
  archived: ['true', 'false'],
  // Instants at every precision (a minute, a second, a fraction) and with offsets, among the world's stamps.
  created: ['today', '-7d', '+1w', '2026-03-01', '2026-03-10T12:00Z', '2026-03-15T06:30:15Z', '2026-03-01t23:59:59.5+01:00'],
  updated: ['-3d', '2026-03-20', '-1y', '2026-03-14T23:00-02:00', '2026-03-12T00:00:00.001', '2026-03-18T17:45:10.123456Z'],
  parent: ['0', '1', '2', '#3'],
};

function fittingComparison(g: Gen): string {
  if (g(fc.boolean)) {
    const b = g(fc.constantFrom, 'state', 'title', 'ref', 'hlevel', 'model', 'archived', 'created', 'updated', 'parent');
    const op = ['state', 'model', 'archived', 'parent'].includes(b) ? g(fc.constantFrom, '=', '!=') : b === 'title' ? g(fc.constantFrom, '=', '!=', '~=') : g(fc.constantFrom, '=', '!=', '<', '<=', '>', '>=');
    return `${b} ${op} ${g(fc.constantFrom, ...FITTING[b])}`;
  }
  const [name, type] = g(fc.constantFrom, ...FIELD_POOL);
  const field = name.includes(' ') ? `{${name}}` : name;
  const v = g(fc.constantFrom, ...FITTING[type]);
  if (['members', 'relationships', 'files', 'group_type'].includes(type) && g(fc.boolean)) return `${v} in ${field}`;
  if (type === 'likes' && g(fc.boolean)) return `${g(fc.constantFrom, ...FITTING.members)} in ${field}`;
  const ops = ['text', 'content', 'files', 'group_type'].includes(type)
    ? ['=', '!=', '~=']
    : ['bool', 'members', 'relationships'].includes(type)
      ? ['=', '!=']
      : ['=', '!=', '<', '<=', '>', '>='];
  return `${field} ${g(fc.constantFrom, ...ops)} ${v}`;
}

/** A random filter text over the whole grammar. */
export function generateFilter(g: Gen, depth = 0): string {
  const choice = depth > 2 ? 0 : g(fc.integer, { min: 0, max: 6 });
  switch (choice) {
    case 0:
    case 1:
    case 2:
      return leaf(g);
    case 3:
      return `not ${generateFilter(g, depth + 1)}`;
    case 4:
      return `(${generateFilter(g, depth + 1)} or ${generateFilter(g, depth + 1)})`;
    case 5:
      return `${generateFilter(g, depth + 1)} ${g(fc.constantFrom, '', 'and ', 'AND ')}${generateFilter(g, depth + 1)}`;
    default:
      return `(${generateFilter(g, depth + 1)})`;
  }
}
