import { Injectable } from '@nestjs/common';
import { jsonColumn, Sql, toId } from '../../../shared/persistence/sql.js';
import type { CardMembershipInfo } from '../contracts/grouping.api.js';
import type { CardMembership } from '../domain/card-membership.entity.js';
import { MEMBERSHIP_COLUMNS, toMembership } from './rows.js';

/** A membership with its group's title, as card views show it. */
export type MembershipRow = CardMembershipInfo;

/**
 * SQL of every membership of the cards whose ids are the array `cardIdsSql`
 * (in the caller's statement), with group titles, as one JSON array of
 * `[card_id, group_id, type_id, position, title]` in `forCards`' order, for a
 * module that reads them along with the cards' rows (STYLE.md §2.6).
 * With `projectIdSql` (the cards' one project), read only if the project has
 * a group type (one probe instead of a scan per card).
 */
export function cardMembershipsJsonSql(cardIdsSql: string, projectIdSql?: string): string {
  const read = membershipsOfSql(cardIdsSql);
  return projectIdSql === undefined ? read : `CASE WHEN EXISTS (SELECT 1 FROM grouping.group_types t WHERE t.project_id = ${projectIdSql}) THEN ${read} END`;
}

function membershipsOfSql(cardIdsSql: string): string {
  return `(SELECT coalesce(json_agg(json_build_array(m.card_id, m.group_id, m.type_id, m.position, g.title)
                                   ORDER BY m.card_id, m.type_id, g.position, g.id), '[]'::json)
             FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id
            WHERE m.card_id = ANY(${cardIdsSql}))`;
}

/** What `cardMembershipsJsonSql` read (json arrives parsed with pg, as text with PGlite). */
export function membershipsFromJson(value: unknown): MembershipRow[] {
  const rows = jsonColumn<Array<[number | string, number | string, number | string, number | string, string]> | null>(value) ?? [];
  return rows.map(([cardId, groupId, typeId, position, title]) => ({
    cardId: toId(cardId),
    groupId: toId(groupId),
    typeId: toId(typeId),
    title,
    position: Number(position),
  }));
}

/**
 * Card memberships and their positions in a group's column. Callers hold the
 * group's row lock while they change positions, so a column stays dense
 * (deletes are renumbered by the `memberships_close_gaps` trigger).
 */
@Injectable()
export class MembershipsRepository {
  constructor(private readonly sql: Sql) {}

  async ofCard(cardId: number, typeId?: number): Promise<CardMembership[]> {
    const rows = await this.sql.rows(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM grouping.memberships
        WHERE card_id = $1 AND ($2::bigint IS NULL OR type_id = $2) ORDER BY group_id`,
      [cardId, typeId ?? null],
    );
    return rows.map(toMembership);
  }

  async find(cardId: number, groupId: number): Promise<CardMembership | null> {
    const [row] = await this.sql.rows(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM grouping.memberships WHERE card_id = $1 AND group_id = $2`,
      [cardId, groupId],
    );
    return row ? toMembership(row) : null;
  }

  async count(groupId: number): Promise<number> {
    const [row] = await this.sql.rows(`SELECT count(*)::int AS n FROM grouping.memberships WHERE group_id = $1`, [groupId]);
    return Number(row.n);
  }

  /**
   * Each group's position after its last card (its count: columns are
   * dense), by a descent of the (group_id, position) index per group rather
   * than counting the column, in one query.
   */
  async nextPositions(groupIds: number[]): Promise<Map<number, number>> {
    if (!groupIds.length) return new Map();
    const rows = await this.sql.rows<{ group_id: string; next: number }>(
      `SELECT g AS group_id, coalesce((SELECT max(position) + 1 FROM grouping.memberships WHERE group_id = g), 0)::int AS next
         FROM unnest($1::bigint[]) AS g`,
      [groupIds],
    );
    return new Map(rows.map((r) => [toId(r.group_id), Number(r.next)]));
  }

  /** Memberships at the end of their columns (positions from `nextPositions`), in one statement. */
  async insertMany(rows: Array<{ cardId: number; groupId: number; typeId: number; position: number }>): Promise<void> {
    if (!rows.length) return;
    await this.sql.run(
      `INSERT INTO grouping.memberships (card_id, group_id, type_id, position)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::int[])`,
      [rows.map((r) => r.cardId), rows.map((r) => r.groupId), rows.map((r) => r.typeId), rows.map((r) => r.position)],
    );
  }

  /** Opens a slot at `position` in the column and puts the card there. */
  async insertAt(m: { cardId: number; groupId: number; typeId: number; position: number }): Promise<void> {
    await this.sql.run(`UPDATE grouping.memberships SET position = position + 1 WHERE group_id = $1 AND position >= $2`, [
      m.groupId,
      m.position,
    ]);
    await this.sql.run(
      `INSERT INTO grouping.memberships (card_id, group_id, type_id, position) VALUES ($1, $2, $3, $4)`,
      [m.cardId, m.groupId, m.typeId, m.position],
    );
  }

  /** Moves a card within its column, shifting the cards in between, in one statement. */
  async reorder(m: CardMembership, to: number): Promise<void> {
    if (m.position === to) return;
    await this.sql.run(
      `UPDATE grouping.memberships
          SET position = CASE WHEN card_id = $2 THEN $4::int WHEN $4::int < $3::int THEN position + 1 ELSE position - 1 END
        WHERE group_id = $1 AND position BETWEEN least($3::int, $4::int) AND greatest($3::int, $4::int)`,
      [m.groupId, m.cardId, m.position, to],
    );
  }

  /** Removes the card from those groups; the trigger closes the gaps. Returns what was removed. */
  async remove(cardId: number, groupIds: number[]): Promise<CardMembership[]> {
    if (!groupIds.length) return [];
    const result = await this.sql.rows(
      `DELETE FROM grouping.memberships WHERE card_id = $1 AND group_id = ANY($2::bigint[]) RETURNING ${MEMBERSHIP_COLUMNS}`,
      [cardId, groupIds],
    );
    return result.map(toMembership);
  }

  /** Memberships of the cards in groups scoped at any of `scopeIds` (unlocked read). */
  async ofCardsScopedAt(cardIds: number[], scopeIds: number[]): Promise<CardMembership[]> {
    if (!cardIds.length || !scopeIds.length) return [];
    const rows = await this.sql.rows(
      `SELECT m.card_id, m.group_id, m.type_id, m.position, m.created_at
         FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id
        WHERE m.card_id = ANY($1::bigint[]) AND g.card_id = ANY($2::bigint[])
        ORDER BY m.card_id, m.group_id`,
      [cardIds, scopeIds],
    );
    return rows.map(toMembership);
  }

  /** Memberships of the cards in groups scoped at none of `scopeIds` (unlocked read). */
  async ofCardsScopedOutside(cardIds: number[], scopeIds: number[]): Promise<CardMembership[]> {
    if (!cardIds.length) return [];
    const rows = await this.sql.rows(
      `SELECT m.card_id, m.group_id, m.type_id, m.position, m.created_at
         FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id
        WHERE m.card_id = ANY($1::bigint[]) AND NOT (g.card_id = ANY($2::bigint[]))
        ORDER BY m.card_id, m.group_id`,
      [cardIds, scopeIds],
    );
    return rows.map(toMembership);
  }

  /**
   * Removes every membership of the cards in those groups, in one statement
   * (the trigger closes each column's gaps once). Returns what was removed,
   * by card then group.
   */
  async removeCards(cardIds: number[], groupIds: number[]): Promise<CardMembership[]> {
    if (!cardIds.length || !groupIds.length) return [];
    const result = await this.sql.rows(
      `DELETE FROM grouping.memberships WHERE card_id = ANY($1::bigint[]) AND group_id = ANY($2::bigint[])
       RETURNING ${MEMBERSHIP_COLUMNS}`,
      [cardIds, groupIds],
    );
    return result
      .map(toMembership)
      .sort((a, b) => a.cardId - b.cardId || a.groupId - b.groupId);
  }

  async ofGroups(groupIds: number[]): Promise<CardMembership[]> {
    if (!groupIds.length) return [];
    const rows = await this.sql.rows(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM grouping.memberships WHERE group_id = ANY($1::bigint[]) ORDER BY card_id, group_id`,
      [groupIds],
    );
    return rows.map(toMembership);
  }

  async ofType(typeId: number): Promise<CardMembership[]> {
    const rows = await this.sql.rows(
      `SELECT ${MEMBERSHIP_COLUMNS} FROM grouping.memberships WHERE type_id = $1 ORDER BY card_id, group_id`,
      [typeId],
    );
    return rows.map(toMembership);
  }

  /** Every membership of the cards, with group titles: by card, type, group position, group id. */
  async forCards(cardIds: number[]): Promise<MembershipRow[]> {
    if (!cardIds.length) return [];
    const row = await this.sql.one(`SELECT ${cardMembershipsJsonSql('$1::bigint[]')} AS memberships`, [cardIds]);
    return membershipsFromJson(row?.memberships ?? null);
  }

}
