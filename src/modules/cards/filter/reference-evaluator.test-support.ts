/**
 * A small, independent evaluator of resolved filters over an in-memory world
 * of cards, for the differential test: it must select exactly the cards that
 * the SQL compiled from the same filter selects. It is written from
 * docs/FILTERS.md, in plain loops, sharing nothing with the SQL side but the
 * resolved `Condition`.
 */
import type { CardState, TimeSpan } from '../../card-hierarchy/index.js';
import type { FilterField, FilterFieldRef, FilterModel } from '../../fields/index.js';
import type { Condition } from './filter.condition.js';

export interface WorldCard {
  id: number;
  projectId: number;
  parentId: number | null;
  ref: number;
  depth: number;
  title: string;
  state: CardState;
  isArchived: boolean;
  /** Archived or under an archived card. */
  hidden: boolean;
  modelId: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorldUser {
  id: number;
  username: string;
  displayName: string;
}

export interface WorldGroup {
  id: number;
  typeId: number;
  projectId: number;
  title: string;
}

/** Everything a filter can look at, as plain rows. */
export interface World {
  users: WorldUser[];
  cards: WorldCard[];
  fields: FilterField[];
  models: FilterModel[];
  scalars: Array<{ cardId: number; fieldId: number; value: unknown }>;
  members: Array<{ cardId: number; fieldId: number; userId: number }>;
  relationships: Array<{ cardId: number; fieldId: number; targetId: number }>;
  votes: Array<{ cardId: number; fieldId: number; userId: number; vote: 1 | -1 }>;
  files: Array<{ cardId: number; fieldId: number; name: string }>;
  groups: WorldGroup[];
  memberships: Array<{ cardId: number; groupId: number }>;
}

type Op = '=' | '<' | '<=' | '>' | '>=';

/**
 * A time against a span `[start, end)` (the world's times are whole
 * milliseconds, and so are the spans the differential test writes).
 */
function inSpan(at: Date, op: Op, span: TimeSpan): boolean {
  const ms = (instant: string) => (instant === 'infinity' ? Infinity : Date.parse(`${instant.slice(0, 23)}Z`));
  const [time, start, end] = [at.getTime(), ms(span.start), ms(span.end)];
  if (op === '=') return start <= time && time < end;
  return op === '<' ? time < start : op === '<=' ? time < end : op === '>' ? time >= end : time >= start;
}

function cmp<T extends number | string>(a: T, op: Op, b: T): boolean {
  switch (op) {
    case '=':
      return a === b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

/** As docs/FILTERS.md compares texts: lower case, a word's final ς the same letter as σ. */
const lower = (s: string) => s.toLowerCase().replace(/ς/g, 'σ');

function textMatches(value: string, match: 'equals' | 'contains', text: string): boolean {
  return match === 'equals' ? lower(value) === lower(text) : lower(value).includes(lower(text));
}


export class ReferenceEvaluator {
  private readonly cardsById: Map<number, WorldCard>;
  private readonly fieldsById: Map<number, FilterField>;

  constructor(private readonly world: World) {
    this.cardsById = new Map(world.cards.map((c) => [c.id, c]));
    this.fieldsById = new Map(world.fields.map((f) => [f.id, f]));
  }

  /** Ids (ascending) of the listed cards of `projectIds` that match. */
  select(condition: Condition, projectIds: number[], withArchived: boolean): number[] {
    return this.world.cards
      .filter((c) => projectIds.includes(c.projectId) && c.depth > 0 && (withArchived || !c.hidden))
      .filter((c) => this.matches(condition, c))
      .map((c) => c.id)
      .sort((a, b) => a - b);
  }

  matches(c: Condition, card: WorldCard): boolean {
    switch (c.kind) {
      case 'all':
        return true;
      case 'none':
        return false;
      case 'and':
        return c.items.every((i) => this.matches(i, card));
      case 'or':
        return c.items.some((i) => this.matches(i, card));
      case 'not':
        return !this.matches(c.item, card);
      case 'card':
        return this.cardTerm(c.term, card);
      case 'group':
        return this.world.memberships.some((m) => {
          if (m.cardId !== card.id) return false;
          const g = this.world.groups.find((x) => x.id === m.groupId)!;
          return (c.term.typeIds === null || c.term.typeIds.includes(g.typeId)) && textMatches(g.title, c.term.match, c.term.title);
        });
      case 'field':
        return this.fieldTerm(c.term, card);
    }
  }

  /** The card uses the field: a project field of its project, or a field of its model. */
  private uses(card: WorldCard, fieldId: number, among: FilterFieldRef[] | null): boolean {
    const f = this.fieldsById.get(fieldId)!;
    if (among !== null && !among.some((r) => r.id === fieldId)) return false;
    return f.projectId === card.projectId && (f.modelId === null || f.modelId === card.modelId);
  }

  private cardTerm(t: Extract<Condition, { kind: 'card' }>['term'], card: WorldCard): boolean {
    switch (t.kind) {
      case 'title':
        return textMatches(card.title, t.match, t.text);
      case 'ref':
        return cmp(card.ref, t.op, t.value);
      case 'hlevel':
        return cmp(card.depth, t.op, t.value);
      case 'state':
        return card.state === t.state;
      case 'archived':
        return card.hidden === t.archived;
      case 'parent': {
        const parent = card.parentId === null ? undefined : this.cardsById.get(card.parentId);
        return parent !== undefined && parent.ref === t.ref;
      }
      case 'created':
        return inSpan(card.createdAt, t.op, t.span);
      case 'updated':
        return inSpan(card.updatedAt, t.op, t.span);
      case 'model':
        return card.modelId !== null && t.modelIds.includes(card.modelId);
    }
  }

  private fieldTerm(t: Extract<Condition, { kind: 'field' }>['term'], card: WorldCard): boolean {
    const w = this.world;
    switch (t.kind) {
      case 'member':
        return w.members.some((m) => m.cardId === card.id && t.userIds.includes(m.userId) && this.uses(card, m.fieldId, t.fields));
      case 'relationship':
        return w.relationships.some((r) => {
          if (r.cardId !== card.id || !this.uses(card, r.fieldId, t.fields)) return false;
          const target = this.cardsById.get(r.targetId)!;
          return target.projectId === card.projectId && target.ref === t.ref;
        });
      case 'liked':
        return w.votes.some((v) => v.cardId === card.id && v.vote === 1 && t.userIds.includes(v.userId) && this.uses(card, v.fieldId, t.fields));
      case 'likes':
        return t.fields.some((f) => {
          if (!this.uses(card, f.id, t.fields)) return false;
          const score = w.votes.filter((v) => v.cardId === card.id && v.fieldId === f.id).reduce((s, v) => s + v.vote, 0);
          return cmp(score, t.op, t.value);
        });
      case 'file':
        return w.files.some((f) => f.cardId === card.id && this.uses(card, f.fieldId, t.fields) && textMatches(f.name, t.match, t.text));
      default:
        return w.scalars.some((s) => s.cardId === card.id && this.uses(card, s.fieldId, t.fields) && scalarMatches(t, s.value));
    }
  }
}

type ScalarTerm = Extract<Condition, { kind: 'field' }>['term'] & { kind: 'text' | 'number' | 'bool' | 'date' | 'period' | 'time' };

function scalarMatches(t: ScalarTerm, value: unknown): boolean {
  switch (t.kind) {
    case 'text':
      return typeof value === 'string' && textMatches(value, t.match, t.text);
    case 'number':
      return typeof value === 'number' && cmp(value, t.op, t.value);
    case 'bool':
      return value === t.value;
    case 'date':
      return typeof value === 'string' && cmp(value.slice(0, 10), t.op, t.day);
    case 'time':
      return typeof value === 'string' && cmp(value, t.op, t.time);
    case 'period': {
      if (typeof value !== 'object' || value === null) return false;
      const start = String((value as { start: string }).start).slice(0, 10);
      const end = String((value as { end: string }).end).slice(0, 10);
      if (t.op === '=') return start <= t.day && t.day <= end;
      return t.op === '<' || t.op === '<=' ? cmp(end, t.op, t.day) : cmp(start, t.op, t.day);
    }
  }
}
