import { Injectable } from '@nestjs/common';
import { CardHierarchyApi, type CardRecord } from '../../card-hierarchy/index.js';
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
   * `projectFields`: the definitions of the cards' one project, if already
   * read (`FieldsApi.projectFieldsSql`); `scalars`: the one card's scalar
   * values, if already read (`FieldsApi.cardScalarsSql`).
   */
  async many(records: CardRecord[], projectFields?: unknown, scalars?: unknown): Promise<CardView[]> {
    if (!records.length) return [];
    const ids = records.map((r) => r.id);
    // Every group type owns a group_type field of its project (fields keeps
    // that link, and such a field is deleted only with its type), so cards of
    // projects without one are in no group: grouping need not be asked. With
    // the definitions already read, that is known at once, and grouping is
    // asked beside the values (one round trip instead of two).
    const early = projectFields !== undefined && this.fields.hasGroupTypeFields(projectFields) ? this.grouping.membershipsOf(ids) : undefined;
    early?.catch(() => undefined);
    const { byCard, groupTypeFields } = await this.fields.attributesOf(records, projectFields, scalars);
    const memberships = groupTypeFields.length ? await (early ?? this.grouping.membershipsOf(ids)) : [];
    const groups = new Map<number, CardGroupView[]>();
    const groupIds = new Map<string, number[]>();
    for (const m of memberships) {
      groups.set(m.cardId, [...(groups.get(m.cardId) ?? []), { id: m.groupId, type_id: m.typeId, title: m.title, card_position: m.position }]);
      const key = `${m.cardId}:${m.typeId}`;
      groupIds.set(key, [...(groupIds.get(key) ?? []), m.groupId]);
    }
    return records.map((r) => {
      const attributes = byCard.get(r.id) ?? {};
      for (const f of groupTypeFields) {
        const ids = f.projectId === r.projectId ? groupIds.get(`${r.id}:${f.groupTypeId}`) : undefined;
        if (ids) attributes[f.name] = ids;
      }
      return toView(r, attributes, groups.get(r.id) ?? []);
    });
  }
}

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
    attributes,
    groups,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
