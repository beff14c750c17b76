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
 * The relationship values (`r`: their row, holder and field) of cards
 * outside the array `$1` that name a card of it. The target side is one
 * probe of `relationship_values_target_idx` per card of `$1`, forced by the
 * lateral subquery (`OFFSET 0` keeps the planner from flattening it): given
 * the array of a whole project (200 000 cards), the planner read the whole
 * table's primary key instead, filtering each value by the array, a cost
 * that grows with every team's values (3 million rows: 0.4 to 0.5 s for
 * the lookup, 1 s for the removal; probed, 0.3 to 0.4 s for either,
 * whatever the table's size). The "outside" test is an anti-join with `$1`, not
 * `<> ALL`, which would compare each value with the whole array.
 */
const NAMING_FROM_OUTSIDE = `unnest($1::bigint[]) AS t(id)
   CROSS JOIN LATERAL (SELECT v.ctid AS row_id, v.card_id, v.attribute_id FROM fields.relationship_values v
                        WHERE v.target_card_id = t.id OFFSET 0) r
   WHERE NOT EXISTS (SELECT 1 FROM unnest($1::bigint[]) AS d(id) WHERE d.id = r.card_id)`;

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
      // By row address (a TID scan). A row another write updated after this
      // statement's snapshot would be at a new address and left: none is,
      // since the rows found are values of cards the caller holds.
      `WITH removed AS (DELETE FROM fields.relationship_values gone
                         WHERE gone.ctid = ANY(ARRAY(SELECT r.row_id FROM ${NAMING_FROM_OUTSIDE}))
                        RETURNING gone.card_id, gone.attribute_id),
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
