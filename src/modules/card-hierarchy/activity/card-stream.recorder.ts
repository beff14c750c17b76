import { Injectable } from '@nestjs/common';
import { CardEvent } from '../../../shared/events/card.events.js';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { Sql } from '../../../shared/persistence/sql.js';
import { STREAM_COLUMNS, toStreamEntryView, type NewStreamEntry, type StreamEntryView } from './card-stream-entry.js';

/**
 * The one writer of the card stream. It records every card event in the
 * publisher's transaction, so no change commits without its entry and no
 * entry survives a rolled-back change (DESIGN.md §9). A comment is not an
 * event of some other module: the stream service writes it here directly.
 */
@Injectable()
export class CardStreamRecorder {
  constructor(private readonly sql: Sql) {}

  @OnAppEvent(CardEvent, { phase: 'in-tx' })
  async record(event: CardEvent): Promise<void> {
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

  /** A comment: one entry of kind `comment`, action `comment.added`. */
  comment(cardId: number, projectId: number, userId: number, content: string): Promise<StreamEntryView> {
    return this.append({ cardId, projectId, kind: 'comment', action: 'comment.added', userId, content, data: {} });
  }

  async append(e: NewStreamEntry): Promise<StreamEntryView> {
    const [row] = await this.sql.rows(
      `INSERT INTO cards.card_stream (card_id, project_id, kind, action, user_id, content, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING ${STREAM_COLUMNS}`,
      [e.cardId, e.projectId, e.kind, e.action, e.userId, e.content, JSON.stringify(e.data)],
    );
    return toStreamEntryView(row);
  }
}
