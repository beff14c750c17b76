import { Injectable } from '@nestjs/common';
import { Sql, toId as n } from '../../../shared/persistence/sql.js';

/** A relationships list of a card that lost entries naming deleted cards: the list before, in position order. */
export interface LostTargetsRow {
  cardId: number;
  projectId: number;
  attributeId: number;
  name: string;
  type: string;
  before: number[];
}

/**
 * The relationship values (`r`) of cards outside the array `$1` that name a
 * card of it. The target side is an index probe per card of `$1`
 * (`relationship_values_target_idx`); the "outside" test an anti-join with
 * `$1`, not `<> ALL`, which would compare each value with the whole array (a
 * subtree of 100 000 cards).
 */
const NAMING_FROM_OUTSIDE = `fields.relationship_values r
   WHERE r.target_card_id = ANY($1::bigint[])
     AND NOT EXISTS (SELECT 1 FROM unnest($1::bigint[]) AS d(id) WHERE d.id = r.card_id)`;

/** Relationship values read from the side of the cards they name (what a deletion of those cards changes). */
@Injectable()
export class RelationshipReferencesRepository {
  constructor(private readonly sql: Sql) {}

  /** Ids of the cards outside `cardIds` holding a relationship value that names one of them, ascending. */
  async cardsNaming(cardIds: number[]): Promise<number[]> {
    if (!cardIds.length) return [];
    const rows = await this.sql.rows(`SELECT DISTINCT r.card_id FROM ${NAMING_FROM_OUTSIDE} ORDER BY r.card_id`, [cardIds]);
    return rows.map((r) => n(r.card_id));
  }

  /**
   * Deletes the relationship values that cards outside `cardIds` hold naming
   * one of them, in one statement; each (card, field) list that lost entries
   * with what it held before (read in the statement's snapshot, which the
   * delete does not change), by card, then field.
   */
  async removeNaming(cardIds: number[]): Promise<LostTargetsRow[]> {
    if (!cardIds.length) return [];
    const rows = await this.sql.rows(
      `WITH removed AS (DELETE FROM ${NAMING_FROM_OUTSIDE} RETURNING r.card_id, r.attribute_id),
            lists AS (SELECT DISTINCT card_id, attribute_id FROM removed)
       SELECT l.card_id, l.attribute_id, a.project_id, a.name, a.type,
              (SELECT json_agg(v.target_card_id ORDER BY v.position) FROM fields.relationship_values v
                WHERE v.card_id = l.card_id AND v.attribute_id = l.attribute_id)::text AS before
         FROM lists l JOIN fields.attributes a ON a.id = l.attribute_id
        ORDER BY l.card_id, l.attribute_id`,
      [cardIds],
    );
    return rows.map((r) => ({
      cardId: n(r.card_id),
      projectId: n(r.project_id),
      attributeId: n(r.attribute_id),
      name: String(r.name),
      type: String(r.type),
      before: (JSON.parse(String(r.before)) as Array<number | string>).map(n),
    }));
  }
}
