import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { appendTo } from '../../../shared/domain/lists-by-key.js';
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
   * What `manyJson` needs, as reads for the children's statement
   * (`CardHierarchyApi.children`; `projectIdSql`: the listed cards' one
   * project there): the definitions, the values and the groups.
   */
  listingReads(projectIdSql: string): { alsoRead: { fields: string }; ofListedCards: (cardIdsSql: string) => Record<string, string> } {
    return { alsoRead: this.readAlong(projectIdSql), ofListedCards: (cardIdsSql) => this.valuesAlong(cardIdsSql, projectIdSql) };
  }

  /** `manyJson`'s arguments after the cards from what `listingReads` read (nothing when no card was listed). */
  listingRead(cards: CardJsonRow[], read: Record<string, unknown>): [projectFields?: unknown, read?: ValuesRead] {
    return cards.length ? [read.fields, valuesRead(read)] : [];
  }

  /** Cards as listings send them (`CardHierarchyApi` JSON rows): one JSON array, as text. `read`: as for `many`. */
  async manyJson(cards: CardJsonRow[], projectFields?: unknown, read?: ValuesRead): Promise<string> {
    if (!cards.length) return '[]';
    const parts = await this.othersParts(cards, projectFields, read);
    let out = '[';
    for (let i = 0; i < cards.length; i++) out += `${i ? ',' : ''}${withOthersJson(cards[i], parts[i].attributes, parts[i].groups)}`;
    return `${out}]`;
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
