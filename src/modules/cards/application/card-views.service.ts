import { Injectable } from '@nestjs/common';
import { CardHierarchyApi, type CardJsonRow, type CardRecord } from '../../card-hierarchy/index.js';
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

  /** One card: its row, its project's field definitions and its scalar values read in one statement. */
  async one(cardId: number): Promise<CardView> {
    const found = await this.hierarchy.recordWith(cardId, { ...this.readAlong('c.project_id'), scalars: this.fields.cardScalarsSql('c.id') });
    if (!found) throw new ComposedCardNotFoundError();
    return (await this.many([found.record], found.read.fields, found.read.scalars))[0];
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
    if (projectId === undefined) return this.manyJson((await this.hierarchy.jsonRows(cardIds)).cards);
    const { cards, read } = await this.hierarchy.jsonRows(cardIds, this.readAlong('$2'), projectId);
    return this.manyJson(cards, cards.length ? read.fields : undefined);
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

  /** Cards as listings send them (`CardHierarchyApi` JSON rows): one JSON array, as text. */
  async manyJson(cards: CardJsonRow[], projectFields?: unknown): Promise<string> {
    if (!cards.length) return '[]';
    const parts = await this.othersParts(cards, projectFields);
    // Each row's JSON ends in its closing brace: the other modules' members go before it.
    let out = '[';
    for (let i = 0; i < cards.length; i++) {
      const { attributes, groups } = parts[i];
      out += `${i ? ',' : ''}${cards[i].json.slice(0, -1)},"attributes":${JSON.stringify(attributes)},"groups":${JSON.stringify(groups)}}`;
    }
    return `${out}]`;
  }

  /**
   * `projectFields`: the definitions of the cards' one project, if already
   * read (`FieldsApi.projectFieldsSql`); `scalars`: the one card's scalar
   * values, if already read (`FieldsApi.cardScalarsSql`).
   */
  async many(records: CardRecord[], projectFields?: unknown, scalars?: unknown): Promise<CardView[]> {
    if (!records.length) return [];
    const parts = await this.othersParts(records, projectFields, scalars);
    return records.map((r, i) => toView(r, parts[i].attributes, parts[i].groups));
  }

  /** Each card's `attributes` (fields) and `groups` (grouping), in the order of `cards`. */
  private async othersParts(cards: CardKey[], projectFields?: unknown, scalars?: unknown): Promise<OthersParts[]> {
    const ids = cards.map((r) => r.id);
    // Every group type owns a group_type field of its project (fields keeps
    // that link, and such a field is deleted only with its type), so cards of
    // projects without one are in no group: grouping need not be asked. With
    // the definitions already read, that is known at once, and grouping is
    // asked beside the values (one round trip instead of two).
    const early = projectFields !== undefined && this.fields.hasGroupTypeFields(projectFields) ? this.grouping.membershipsOf(ids) : undefined;
    early?.catch(() => undefined);
    const { byCard, groupTypeFields } = await this.fields.attributesOf(cards, projectFields, scalars);
    const memberships = groupTypeFields.length ? await (early ?? this.grouping.membershipsOf(ids)) : [];
    const groups = new Map<number, CardGroupView[]>();
    const groupIds = new Map<string, number[]>();
    for (const m of memberships) {
      groups.set(m.cardId, [...(groups.get(m.cardId) ?? []), { id: m.groupId, type_id: m.typeId, title: m.title, card_position: m.position }]);
      const key = `${m.cardId}:${m.typeId}`;
      groupIds.set(key, [...(groupIds.get(key) ?? []), m.groupId]);
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
