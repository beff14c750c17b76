import { Injectable } from '@nestjs/common';
import { CardEvent, CardEventBatch } from '../../../shared/events/card.events.js';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import { Sql, toId } from '../../../shared/persistence/sql.js';
import { STREAM_COLUMNS, toStreamEntryView, type NewStreamEntry, type StreamEntryView } from './card-stream-entry.js';

const BATCH_CHUNK = 5000;

/** One entry: every card change writes one (named statement: it is on every write path). */
const APPEND_SQL = prepared(
  `INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
   VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING ${STREAM_COLUMNS}`,
);

/**
 * Writing along (bulk work: an import's new cards and values): the SQL that
 * records a batch's entries inside the statement that makes the change, so the
 * entries cost neither a round trip of their own nor a JSON parameter to parse.
 * `source` names a relation of that statement with the columns `card_id`,
 * `project_id`, `action` (the event name), `user_id`, `data` (the event's
 * payload, built by the owner of the event) and `ord` (entries are inserted in
 * its order, so their ids follow the events'). The publisher still publishes
 * the events, as a `CardEventBatch` marked `recordedAlong`, which this writer
 * then skips. The kind follows `system` as for a published event.
 */
export function recordAlongSql(source: string, options: { system?: boolean } = {}): string {
  const kind = options.system ? 'log' : 'activity';
  return `INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
          SELECT card_id, project_id, '${kind}', action, user_id, NULL, data FROM ${source} ORDER BY ord`;
}

/**
 * The one writer of the card stream. It records every card event in the
 * publisher's transaction, so no change commits without its entry and no
 * entry survives a rolled-back change (DESIGN.md §9). A comment is not an
 * event of some other module: the stream service writes it here directly
 * (and publishes `CommentsAdded`, which is no entry).
 */
@Injectable()
export class CardStreamRecorder {
  constructor(private readonly sql: Sql) {}

  /**
   * A card event published on its own, or a batch whole (one handler of both
   * shapes, so the bus does not hand it a batch's events one by one too). It
   * rides one-statement units: all they publish is recorded along, which it
   * skips without a statement.
   */
  @OnAppEvent([CardEvent, CardEventBatch], { phase: 'in-tx', ridesStatement: true })
  async record(event: CardEvent | CardEventBatch): Promise<void> {
    if (event instanceof CardEventBatch) return this.recordMany(event);
    await this.append({
      cardId: event.cardId,
      projectId: event.projectId,
      kind: event.system ? 'log' : 'activity',
      action: event.name,
      userId: event.actorId,
      content: null,
      data: event.data,
    });
  }

  /**
   * A batch in one INSERT per chunk (bulk work: an import's thousands of
   * entries). The chunk travels as one JSON array of `[card_id, project_id,
   * kind, action, user_id, data]` rows: one JSON.stringify and one jsonb parse,
   * where six array parameters cost an escaped array literal each (the jsonb[]
   * one dominated the statement's time).
   */
  private async recordMany(batch: CardEventBatch): Promise<void> {
    if (batch.recordedAlong) return; // the statement that made the change wrote them (recordAlongSql)
    for (let at = 0; at < batch.events.length; at += BATCH_CHUNK) {
      const events = batch.events.slice(at, at + BATCH_CHUNK);
      await this.sql.run(
        prepared(`INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
         SELECT (e->>0)::bigint, (e->>1)::bigint, e->>2, e->>3, (e->>4)::bigint, NULL, e->5
           FROM jsonb_array_elements($1::jsonb) AS e`),
        [JSON.stringify(events.map((e) => [e.cardId, e.projectId, e.system ? 'log' : 'activity', e.name, e.actorId, e.data]))],
      );
    }
  }

  /**
   * Comments (entries of kind `comment`) in one INSERT per chunk, as
   * `recordMany` writes a batch; their entry ids, in the order given (ids
   * are drawn in the order the rows are inserted, `ord`).
   */
  async comments(entries: Array<{ cardId: number; projectId: number; userId: number; content: string }>): Promise<number[]> {
    const ids: number[] = [];
    for (let at = 0; at < entries.length; at += BATCH_CHUNK) {
      const chunk = entries.slice(at, at + BATCH_CHUNK);
      const rows = await this.sql.rows<{ id: unknown }>(
        prepared(`INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
         SELECT (e->>0)::bigint, (e->>1)::bigint, 'comment', 'comment.added', (e->>2)::bigint, e->>3, '{}'::jsonb
           FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(e, ord) ORDER BY ord
         RETURNING id`),
        [JSON.stringify(chunk.map((e) => [e.cardId, e.projectId, e.userId, e.content]))],
      );
      ids.push(...rows.map((r) => toId(r.id)).sort((a, b) => a - b));
    }
    return ids;
  }

  /** A comment: one entry of kind `comment`, action `comment.added`. */
  comment(cardId: number, projectId: number, userId: number, content: string): Promise<StreamEntryView> {
    return this.append({ cardId, projectId, kind: 'comment', action: 'comment.added', userId, content, data: {} });
  }

  async append(e: NewStreamEntry): Promise<StreamEntryView> {
    const [row] = await this.sql.rows(
      APPEND_SQL,
      [e.cardId, e.projectId, e.kind, e.action, e.userId, e.content, JSON.stringify(e.data)],
    );
    return toStreamEntryView(row);
  }
}
