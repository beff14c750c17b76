import { Injectable } from '@nestjs/common';
import { Sql, toId } from '../../../shared/persistence/sql.js';
import { STREAM_COLUMNS, toStreamEntryView, type StreamEntryView } from './card-stream-entry.js';

/** Reads of the card stream (CardStreamRecorder writes it). */
@Injectable()
export class CardStreamRepository {
  constructor(private readonly sql: Sql) {}

  /** Newest first. */
  async page(cardId: number, limit: number, offset: number): Promise<{ items: StreamEntryView[]; total: number }> {
    const rows = await this.sql.rows(
      `SELECT ${STREAM_COLUMNS}, count(*) OVER () AS total FROM cards.card_stream
        WHERE card_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`,
      [cardId, limit, offset],
    );
    if (rows.length) return { items: rows.map(toStreamEntryView), total: Number(rows[0].total) };
    const [count] = await this.sql.rows<{ n: number }>(`SELECT count(*)::int AS n FROM cards.card_stream WHERE card_id = $1`, [cardId]);
    return { items: [], total: Number(count.n) };
  }

  /** CardHierarchyApi.commentsWithContents: by `card_stream_card_idx`, the cards' entries filtered. */
  async commentsWithContents(cardIds: number[], userId: number, contents: string[]): Promise<Array<{ cardId: number; content: string }>> {
    if (!cardIds.length || !contents.length) return [];
    const rows = await this.sql.rows<{ card_id: string | number; content: string }>(
      `SELECT DISTINCT card_id, content FROM cards.card_stream
        WHERE card_id = ANY($1::bigint[]) AND kind = 'comment' AND user_id = $2 AND content = ANY($3::text[])`,
      [cardIds, userId, contents],
    );
    return rows.map((r) => ({ cardId: toId(r.card_id), content: r.content }));
  }
}
