import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type StreamKind = 'comment' | 'activity' | 'log';

/** One append-only entry of a card's stream: a comment, an activity or a log line. */
@Entity({ schema: 'cards', name: 'card_stream' })
export class CardStreamEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: number;

  @Column({ type: 'bigint' })
  cardId: number;

  @Column({ type: 'bigint' })
  projectId: number;

  @Column({ type: 'text' })
  kind: StreamKind;

  /** The event name (`card.created`, `comment.added`, …). */
  @Column({ type: 'text' })
  action: string;

  @Column({ type: 'bigint', nullable: true })
  userId: number | null;

  @Column({ type: 'text', nullable: true })
  content: string | null;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}

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

export const toStreamEntryView = (e: CardStreamEntry): StreamEntryView => ({
  id: Number(e.id),
  card_id: Number(e.cardId),
  kind: e.kind,
  action: e.action,
  user_id: e.userId === null ? null : Number(e.userId),
  content: e.content,
  data: e.data,
  created_at: new Date(e.createdAt).toISOString(),
});
