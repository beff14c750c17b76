import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config.js';
import type { CardAttributes, FieldCardRef, GroupTypeFieldRef } from '../contracts/fields.api.js';
import { isFieldAvailable, type FieldDefinition } from '../domain/field-definition.js';
import { emptyValue, fieldTypeHandler } from '../domain/values/index.js';
import { FieldDefinitionsRepository } from '../infrastructure/field-definitions.repository.js';
import { FieldValuesRepository, type CardValueRows, type StoredFileRow, type ValueKind } from '../infrastructure/field-values.repository.js';

/** A card's field as read: where to find it, and the card it belongs to. */
export type CardRef = FieldCardRef;

export interface LikesValue {
  score: number;
  votes: Record<string, number>;
}

export interface FileValue {
  id: number;
  name: string;
  size: number;
  mime_type: string;
  url: string;
}

/**
 * Builds the `attributes` map of the card JSON (DESIGN.md §4, §5) for a batch
 * of cards in a fixed number of queries: every field the card may use, keyed
 * by name, with `null` or `[]` when unset. Values of fields the card may not
 * use (another model's) stay stored and are simply not shown.
 */
@Injectable()
export class AttributeValuesReader {
  constructor(
    private readonly definitions: FieldDefinitionsRepository,
    private readonly values: FieldValuesRepository,
    private readonly config: AppConfig,
  ) {}

  fileUrl(fileId: number): string {
    return `${this.config.baseUrl}/files/${fileId}`;
  }

  toFileValue(f: StoredFileRow): FileValue {
    return { id: f.id, name: f.name, size: f.size, mime_type: f.mimeType, url: this.fileUrl(f.id) };
  }

  /**
   * `only`: show just these fields (definitions the caller already holds),
   * which spares reading the projects' definitions again; `alreadyRead`:
   * every value of the cards, when read along with their rows (then no query).
   */
  async attributesOf(cards: CardRef[], only?: FieldDefinition[], alreadyRead?: CardValueRows): Promise<CardAttributes> {
    const result = new Map<number, Record<string, unknown>>();
    if (!cards.length) return { byCard: result, groupTypeFields: [] };
    const fields = only ?? (await this.definitions.fieldsOfProjects([...new Set(cards.map((c) => c.projectId))]));
    const shownByCard = new Map(cards.map((c) => [c.id, fields.filter((f) => f.projectId === c.projectId && isFieldAvailable(f, c.modelId))]));
    const shownStorage = new Set([...shownByCard.values()].flat().map((f) => fieldTypeHandler(f.type).storage));
    const cardIds = cards.map((c) => c.id);
    const values = new Map<string, unknown>();
    const key = (cardId: number, attributeId: number) => `${cardId}:${attributeId}`;
    const pushTo = (k: string, v: unknown) => {
      const list = (values.get(k) as unknown[] | undefined) ?? [];
      list.push(v);
      values.set(k, list);
    };

    // The kinds of storage the shown fields use (FieldTypeHandler.storage), in one query.
    const kinds = new Set([...shownStorage].filter((k): k is ValueKind => k !== 'groups'));
    const read = alreadyRead ?? (await this.values.valuesOf(cardIds, kinds));
    // How each kind's rows make the values a card shows (a new kind does not compile without its own).
    const show: { [K in ValueKind]: (rows: CardValueRows[K]) => void } = {
      scalar: (rows) => rows.forEach((r) => values.set(key(r.cardId, r.attributeId), r.value)),
      members: (rows) => rows.forEach((r) => pushTo(key(r.cardId, r.attributeId), r.ref)),
      relationships: (rows) => rows.forEach((r) => pushTo(key(r.cardId, r.attributeId), r.ref)),
      files: (rows) => rows.forEach((f) => pushTo(key(f.cardId, f.attributeId), this.toFileValue(f))),
      likes: (rows) =>
        rows.forEach((v) => {
          const k = key(v.cardId, v.attributeId);
          const likes = (values.get(k) as LikesValue | undefined) ?? { score: 0, votes: {} };
          likes.score += v.vote;
          likes.votes[String(v.userId)] = v.vote;
          values.set(k, likes);
        }),
    };
    const showKind = <K extends ValueKind>(kind: K) => show[kind](read[kind]);
    for (const kind of Object.keys(show) as ValueKind[]) showKind(kind);
    for (const card of cards) {
      const attributes: Record<string, unknown> = {};
      for (const f of shownByCard.get(card.id) ?? []) {
        attributes[f.name] = values.get(key(card.id, f.id)) ?? emptyValue(f.type);
      }
      result.set(card.id, attributes);
    }
    const groupTypeFields: GroupTypeFieldRef[] = fields
      .filter((f) => f.type === 'group_type' && f.groupTypeId !== null && shownStorage.has('groups'))
      .map((f) => ({ attributeId: f.id, projectId: f.projectId, name: f.name, groupTypeId: f.groupTypeId! }));
    return { byCard: result, groupTypeFields };
  }

  /** A card with no values yet: every field it may use, unset. */
  blankAttributes(card: CardRef, fields: FieldDefinition[]): Record<string, unknown> {
    const attributes: Record<string, unknown> = {};
    for (const f of fields) if (f.projectId === card.projectId && isFieldAvailable(f, card.modelId)) attributes[f.name] = emptyValue(f.type);
    return attributes;
  }

  /** One card's values (group_type fields show `[]`: their value is grouping's, never written here). */
  async attributesOfOne(card: CardRef, only?: FieldDefinition[]): Promise<Record<string, unknown>> {
    return (await this.attributesOf([card], only)).byCard.get(card.id) ?? {};
  }
}
