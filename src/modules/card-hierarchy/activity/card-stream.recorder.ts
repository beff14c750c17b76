import { Injectable } from '@nestjs/common';
import { CardEvent, CommentAdded } from '../../../shared/events/card.events.js';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { StreamKind } from './card-stream-entry.entity.js';

/**
 * The one writer of the card stream. It records every card event in the
 * publisher's transaction, so no change commits without its entry and no
 * entry survives a rolled-back change (DESIGN.md §9).
 */
@Injectable()
export class CardStreamRecorder {
  constructor(private readonly uow: UnitOfWork) {}

  @OnAppEvent(CardEvent, { phase: 'in-tx' })
  record(event: CardEvent): Promise<void> {
    const kind: StreamKind = event instanceof CommentAdded ? 'comment' : event.system ? 'log' : 'activity';
    const { content, entry_id: entryId, ...data } = event.data as { content?: string; entry_id?: number };
    return this.append({
      id: entryId ?? null,
      cardId: event.cardId,
      projectId: event.projectId,
      kind,
      action: event.name,
      userId: event.actorId,
      content: typeof content === 'string' ? content : null,
      data: kind === 'comment' ? {} : data,
    });
  }

  async append(e: {
    id: number | null;
    cardId: number;
    projectId: number;
    kind: StreamKind;
    action: string;
    userId: number | null;
    content: string | null;
    data: Record<string, unknown>;
  }): Promise<void> {
    await this.uow.manager.query(
      `INSERT INTO cards.card_stream (id, card_id, project_id, kind, action, user_id, content, data)
       VALUES (coalesce($1, nextval(pg_get_serial_sequence('cards.card_stream', 'id'))), $2, $3, $4, $5, $6, $7, $8::jsonb)`,
      [e.id, e.cardId, e.projectId, e.kind, e.action, e.userId, e.content, JSON.stringify(e.data)],
    );
  }
}
