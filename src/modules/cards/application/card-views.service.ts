import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { appendTo } from '../../../shared/domain/lists-by-key.js';
import type { JsonArrayParts } from '../../../shared/http/json-text.js';
import { CardHierarchyApi, type CardJsonRow, type CardRecord, type ChildrenOf } from '../../card-hierarchy/index.js';
import { FieldsApi } from '../../fields/index.js';
import { GroupingApi } from '../../grouping/index.js';
import type { CardGroupView, CardView } from '../contracts/cards.api.js';
import { ComposedCardNotFoundError } from '../domain/cards.errors.js';

/**
 * The card JSON: card-hierarchy's row, fields' `attributes`, grouping's
 * `groups`, and the value of each `group_type` field (the card's groups of
 * that type). A fixed number of queries for any batch (no N+1).
 */
@Injectable()
export class CardViewsService {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
    private readonly grouping: GroupingApi,
  ) {}

  /** One card: its row, its project's field definitions, its values and its groups, read in one statement. */
  async one(cardId: number): Promise<CardView> {
    const found = await this.hierarchy.recordWith(cardId, this.oneAlong());
    if (!found) throw new ComposedCardNotFoundError();
    return this.oneView(found);
  }

  /** `one` for a caller whose read access is checked in the same statement (GET /cards/{id}). */
  async seenBy(cardId: number, actor: Actor): Promise<CardView> {
    return this.oneView(await this.hierarchy.readableRecord(cardId, actor, this.oneAlong()));
  }

  private oneAlong(): Record<string, string> {
    return { ...this.readAlong('c.project_id'), ...this.valuesAlong('ARRAY[c.id]', 'c.project_id') };
  }

  private async oneView(found: { record: CardRecord; read: Record<string, unknown> }): Promise<CardView> {
    return (await this.many([found.record], found.read.fields, valuesRead(found.read)))[0];
  }

  /**
   * A card as a guarded write left it (`CardHierarchyApi.touchCurrent`),
   * as JSON text: its row as written, with `read` holding what
   * `valuesAlong('ARRAY[c.id]', 'c.project_id')` read in that statement (its snapshot, from
   * before the write) and `overlay` setting what the statement wrote. No query.
   */
  async afterWrite(
    card: CardJsonRow,
    projectFields: unknown,
    read: Record<string, unknown>,
    overlay: (attributes: Record<string, unknown>) => void,
  ): Promise<string> {
    const [{ attributes, groups }] = await this.othersParts([card], projectFields, valuesRead(read));
    overlay(attributes);
    return withOthersJson(card, attributes, groups);
  }

  /** Cards by id, in that order (missing ones left out). */
  async byIds(cardIds: number[]): Promise<CardView[]> {
    return this.many(await this.hierarchy.records(cardIds));
  }

  /**
   * The same as one JSON array, as text (listings). `projectId`: the cards'
   * one project, whose field definitions are then read with the rows.
   */
  async byIdsJson(cardIds: number[], projectId?: number): Promise<string> {
    // The values and groups of the cards ($1) come with their rows; across
    // projects, the definitions are read afterwards (those of the cards' projects only).
    const alsoRead = projectId === undefined ? this.valuesAlong('$1::bigint[]') : { ...this.readAlong('$2'), ...this.valuesAlong('$1::bigint[]', '$2') };
    const { cards, read } = await this.hierarchy.jsonRows(cardIds, alsoRead, projectId);
    return this.manyJson(cards, projectId !== undefined && cards.length ? read.fields : undefined, valuesRead(read));
  }

  /**
   * A card just created with no values and no `group_id`, from its row and
   * its project's field definitions (`FieldsApi.projectFieldsSql`, read while
   * it was created): every field unset, in no group. No query.
   */
  ofNewCard(record: CardRecord, projectFields: unknown): CardView {
    return toView(record, this.fields.blankAttributes(record, projectFields), []);
  }

  /**
   * What `many` needs besides the rows, as SQL for the statement that reads
   * the rows (`projectIdSql`: the project's id there): the field definitions.
   */
  readAlong(projectIdSql: string): { fields: string } {
    return { fields: this.fields.projectFieldsSql(projectIdSql) };
  }

  /**
   * What `many` needs of the cards themselves, as SQL for the statement that
   * reads their rows (`cardIdsSql`: their ids as an array there): every value
   * (fields) and every membership (grouping). Read this way, a batch costs
   * no round trip after its rows. `projectIdSql`: the cards' one project,
   * which spares the reads its fields and group types cannot need.
   */
  valuesAlong(cardIdsSql: string, projectIdSql?: string): { values: string; memberships: string } {
    return {
      values: this.fields.cardValuesSql(cardIdsSql, projectIdSql),
      memberships: this.grouping.membershipsSql(cardIdsSql, projectIdSql),
    };
  }

  /**
   * GET /cards/{id}/children, unpaginated, as the parts of one JSON array
   * (`sendJsonArray`): the first `CHILDREN_PART` children with the access
   * check, their definitions, values and groups in one statement, which
   * also reads the ids of the others; then the others a part at a time,
   * each part read (`jsonRows`, with their values and groups; the
   * definitions are the first statement's) once the one before is written,
   * through the first statement's filter again (`childrenOf`). So a child
   * changed meanwhile shows as it is when its part is read, and one
   * deleted, archived (without `withArchived`) or moved to another parent
   * meanwhile is left out.
   */
  async childrenJson(cardId: number, actor: Actor, withArchived: boolean): Promise<JsonArrayParts> {
    const { cards, read, rest } = await this.hierarchy.children(cardId, actor, {
      withArchived,
      limit: CHILDREN_PART,
      alsoRead: this.readAlong('c.project_id'),
      ofListedCards: (cardIdsSql) => this.valuesAlong(cardIdsSql, 'c.project_id'),
    });
    if (!cards.length) return { first: '' };
    const first = await this.itemsJson(cards, read.fields, valuesRead(read));
    const childrenOf = { parentId: cardId, withArchived };
    return { first, rest: rest.length ? this.partsJson(rest, childrenOf, cards[0].projectId, read.fields) : undefined };
  }

  /**
   * The cards `ids` of project `projectId` (whose definitions are
   * `projectFields`) that are still `childrenOf` as JSON parts, each read when asked for.
   */
  private async *partsJson(ids: number[], childrenOf: ChildrenOf, projectId: number, projectFields: unknown): AsyncGenerator<string> {
    let size = CHILDREN_PART;
    for (let at = 0; at < ids.length; ) {
      const batch = ids.slice(at, (at += size));
      const { cards, read } = await this.hierarchy.jsonRows(batch, this.valuesAlong('$1::bigint[]', '$2'), projectId, childrenOf);
      const part = await this.itemsJson(cards, projectFields, valuesRead(read));
      size = nextPartSize(batch.length, part.length);
      yield part;
    }
  }

  /** Cards as listings send them (`CardHierarchyApi` JSON rows): one JSON array, as text. `read`: as for `many`. */
  async manyJson(cards: CardJsonRow[], projectFields?: unknown, read?: ValuesRead): Promise<string> {
    return `[${await this.itemsJson(cards, projectFields, read)}]`;
  }

  /** `manyJson` without the brackets: the cards' JSON joined by commas. */
  private async itemsJson(cards: CardJsonRow[], projectFields?: unknown, read?: ValuesRead): Promise<string> {
    if (!cards.length) return '';
    const parts = await this.othersParts(cards, projectFields, read);
    let out = '';
    for (let i = 0; i < cards.length; i++) out += `${i ? ',' : ''}${withOthersJson(cards[i], parts[i].attributes, parts[i].groups)}`;
    return out;
  }

  /**
   * `projectFields`: the definitions of the cards' one project, if already
   * read (`FieldsApi.projectFieldsSql`); `read`: the values and memberships
   * of exactly these cards, if already read (`valuesAlong`).
   */
  async many(records: CardRecord[], projectFields?: unknown, read?: ValuesRead): Promise<CardView[]> {
    if (!records.length) return [];
    const parts = await this.othersParts(records, projectFields, read);
    return records.map((r, i) => toView(r, parts[i].attributes, parts[i].groups));
  }

  /** Each card's `attributes` (fields) and `groups` (grouping), in the order of `cards`. */
  private async othersParts(cards: CardKey[], projectFields?: unknown, read?: ValuesRead): Promise<OthersParts[]> {
    const ids = cards.map((r) => r.id);
    // Every group type owns a group_type field of its project (fields keeps
    // that link, and such a field is deleted only with its type), so cards of
    // projects without one are in no group: grouping need not be asked. With
    // the definitions already read, that is known at once, and grouping is
    // asked beside the values (one round trip instead of two).
    const early =
      read === undefined && projectFields !== undefined && this.fields.hasGroupTypeFields(projectFields) ? this.grouping.membershipsOf(ids) : undefined;
    early?.catch(() => undefined);
    const { byCard, groupTypeFields } = await this.fields.attributesOf(cards, projectFields, read?.values);
    const memberships = !groupTypeFields.length
      ? []
      : read !== undefined
        ? this.grouping.membershipsRead(read.memberships)
        : await (early ?? this.grouping.membershipsOf(ids));
    const groups = new Map<number, CardGroupView[]>();
    const groupIds = new Map<string, number[]>();
    for (const m of memberships) {
      appendTo(groups, m.cardId, { id: m.groupId, type_id: m.typeId, title: m.title, card_position: m.position });
      appendTo(groupIds, `${m.cardId}:${m.typeId}`, m.groupId);
    }
    return cards.map((r) => {
      const attributes = byCard.get(r.id) ?? {};
      for (const f of groupTypeFields) {
        const ids = f.projectId === r.projectId ? groupIds.get(`${r.id}:${f.groupTypeId}`) : undefined;
        if (ids) attributes[f.name] = ids;
      }
      return { attributes, groups: groups.get(r.id) ?? [] };
    });
  }
}

/**
 * The children a part of GET /cards/{id}/children reads at most: a card's
 * children are answered all at once (DESIGN.md; no paging), and 20 000 of
 * 1 004 fields, two of them texts of 10 000 characters, made one string past
 * V8's limit (a 500 after 40 s and 2.5 GB).
 */
export const CHILDREN_PART = 500;

/** About how many characters of JSON a part after the first may hold: cards heavy with values come fewer at a time. */
export const PART_CHARS = 8 * 2 ** 20;

/** How many cards the next part reads, after `count` cards made `chars` characters: about `PART_CHARS` worth, 1 to `CHILDREN_PART`. */
export function nextPartSize(count: number, chars: number): number {
  return Math.max(1, Math.min(CHILDREN_PART, Math.floor((count * PART_CHARS) / Math.max(chars, 1))));
}

/** What `valuesAlong` read, for `many` and `manyJson`. */
interface ValuesRead {
  values: unknown;
  memberships: unknown;
}

/** `valuesAlong`'s reads out of what a statement read along. */
function valuesRead(read: Record<string, unknown>): ValuesRead {
  return { values: read.values, memberships: read.memberships };
}

/** A card's JSON row with the other modules' members: each row's JSON ends in its closing brace, and they go before it. */
function withOthersJson(card: CardJsonRow, attributes: Record<string, unknown>, groups: CardGroupView[]): string {
  return `${card.json.slice(0, -1)},"attributes":${JSON.stringify(attributes)},"groups":${JSON.stringify(groups)}}`;
}

/** What the other modules need of a card to add their members. */
type CardKey = Pick<CardRecord, 'id' | 'projectId' | 'modelId'>;

interface OthersParts {
  attributes: Record<string, unknown>;
  groups: CardGroupView[];
}

/**
 * The card JSON of a card row. The members and their order are those of
 * card-hierarchy's JSON rows (`CardJsonRow.json`) followed by `attributes` and
 * `groups`, which is how listings write them.
 */
function toView(c: CardRecord, attributes: Record<string, unknown>, groups: CardGroupView[]): CardView {
  return {
    id: c.id,
    ref: c.ref,
    project_id: c.projectId,
    parent_id: c.parentId,
    title: c.title,
    state: c.state,
    is_archived: c.isArchived,
    position: c.position,
    depth: c.depth,
    model_id: c.modelId,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    attributes,
    groups,
  };
}
