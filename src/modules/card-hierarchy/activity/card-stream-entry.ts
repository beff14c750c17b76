import { jsonColumn, toId, toIdOrNull, type Row } from '../../../shared/persistence/sql.js';
import type { CardActivityData } from '../../../shared/events/card.events.js';

export type StreamKind = 'comment' | 'activity' | 'log';

/** An entry to append to a card's stream: a comment, an activity or a log line. */
export interface NewStreamEntry {
  cardId: number;
  projectId: number;
  kind: StreamKind;
  /** The event name (`card.created`, …), or `comment.added`. */
  action: string;
  userId: number | null;
  content: string | null;
  /** A comment's is `{}`. */
  data: CardActivityData | Record<string, never>;
}

/** The stream entry JSON of DESIGN.md §4. */
export interface StreamEntryView {
  id: number;
  card_id: number;
  kind: StreamKind;
  action: string;
  user_id: number | null;
  content: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export const STREAM_COLUMNS = 'id, card_id, kind, action, user_id, content, data, created_at';

export const toStreamEntryView = (r: Row): StreamEntryView => ({
  id: toId(r.id),
  card_id: toId(r.card_id),
  kind: r.kind as StreamKind,
  action: String(r.action),
  user_id: toIdOrNull(r.user_id),
  content: (r.content as string | null) ?? null,
  data: jsonColumn<Record<string, unknown>>(r.data),
  created_at: new Date(r.created_at as string).toISOString(),
});
