import { Injectable } from '@nestjs/common';
import type { ListingStart } from '../../../shared/http/cursor.js';
import { Sql, toId } from '../../../shared/persistence/sql.js';
import { STREAM_COLUMNS, toStreamEntryView, type StreamEntryView } from './card-stream-entry.js';

/** Reads of the card stream (CardStreamRecorder writes it). */
@Injectable()
export class CardStreamRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Newest first, with the card's entry count, in one statement (the page
   * hangs off the count through a lateral join, so an empty page still has
   * its row): after a keyset position (`id < after`), a range scan of
   * `card_stream_card_idx` from that id; else at an offset. `limit` is one
   * more than the page, for the caller to tell whether a next page exists.
   */
  async page(cardId: number, limit: number, from: ListingStart): Promise<{ items: StreamEntryView[]; total: number }> {
    const range = 'after' in from ? 'AND id < $2 ORDER BY id DESC LIMIT $3' : 'ORDER BY id DESC LIMIT $3 OFFSET $2';
    const rows = await this.sql.rows(
      `SELECT n.total, page.* FROM (SELECT count(*)::int AS total FROM cards.card_stream WHERE card_id = $1) n
         LEFT JOIN LATERAL (SELECT ${STREAM_COLUMNS} FROM cards.card_stream WHERE card_id = $1 ${range}) page ON true
        ORDER BY page.id DESC`,
      [cardId, 'after' in from ? from.after : from.offset, limit],
    );
    const found = rows[0].id === null ? [] : rows;
    return { items: found.map(toStreamEntryView), total: Number(rows[0].total) };
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
