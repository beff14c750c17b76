import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { keysetPage, listingStart, type ListingPageInfo, type ListingRequest } from '../../../shared/http/cursor.js';
import { hasUnsafeText, longerThan, UNSAFE_TEXT_MESSAGE } from '../../../shared/domain/safe-text.js';
import { CommentsAdded } from '../../../shared/events/comment.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { StreamEntryView } from '../activity/card-stream-entry.js';
import { CardStreamRecorder } from '../activity/card-stream.recorder.js';
import { CardStreamRepository } from '../activity/card-stream.repository.js';
import { CardNotFoundError, InvalidCardInputError } from '../domain/card.errors.js';
import { CardTreeRepository } from '../infrastructure/card-tree.repository.js';
import { CardAccessService } from './card-access.service.js';

const MAX_COMMENT = 100_000;

@Injectable()
export class CardStreamService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly access: CardAccessService,
    private readonly stream: CardStreamRepository,
    private readonly recorder: CardStreamRecorder,
    private readonly cards: CardTreeRepository,
    private readonly events: EventBus,
  ) {}

  /** A page of the card's stream, newest first, by `page` or by cursor (keyset: no entry twice while comments are added). */
  async list(cardId: number, actor: Actor, page: ListingRequest): Promise<{ items: StreamEntryView[] } & ListingPageInfo> {
    await this.access.require(cardId, actor, 'read');
    // One entry more than the page tells whether a next page exists (for its cursor).
    const { items, total } = await this.stream.page(cardId, page.perPage + 1, listingStart(page));
    return { ...keysetPage(items, page.perPage, (entry) => entry.id), total };
  }

  /**
   * A comment is one stream entry of kind `comment`, written by the stream
   * writer (the answer is that entry); `CommentsAdded` is published in its
   * transaction.
   */
  comment(cardId: number, content: unknown, actor: Actor): Promise<StreamEntryView> {
    const text = validComment(content, 'content');
    return this.uow.run(async () => {
      const { card } = await this.access.require(cardId, actor, 'write');
      if (!(await this.cards.holdKey(cardId))) throw new CardNotFoundError();
      const entry = await this.recorder.comment(cardId, card.projectId, actor.userId, text);
      await this.events.publish(new CommentsAdded(card.projectId, [cardId], [entry.id], actor.userId));
      return entry;
    });
  }

  /**
   * Comments on many cards of one team (an import's rows), in order: the
   * cards locked with the caller's write access checked in one statement
   * (the caller's transaction usually holds them already), the entries in
   * one INSERT per chunk; one `CommentsAdded` per project.
   */
  commentMany(entries: Array<{ cardId: number; content: string }>, actor: Actor): Promise<void> {
    if (!entries.length) return Promise.resolve();
    const texts = entries.map((e, i) => validComment(e.content, `comments[${i}]`));
    return this.uow.run(async () => {
      const cards = new Map((await this.access.lockAll(entries.map((e) => e.cardId), actor, 'write')).map((c) => [c.id, c]));
      const written = entries.map((e, i) => ({ cardId: e.cardId, projectId: cards.get(e.cardId)!.projectId, userId: actor.userId, content: texts[i] }));
      const ids = await this.recorder.comments(written);
      await this.events.publish(...commentsAdded(written, ids, actor));
    });
  }
}

/** The `CommentsAdded` of comments written with these entry ids, one per project. */
function commentsAdded(written: Array<{ cardId: number; projectId: number }>, ids: number[], actor: Actor): CommentsAdded[] {
  const byProject = new Map<number, { cardIds: number[]; commentIds: number[] }>();
  written.forEach(({ cardId, projectId }, i) => {
    const added = byProject.get(projectId) ?? { cardIds: [], commentIds: [] };
    added.cardIds.push(cardId);
    added.commentIds.push(ids[i]);
    byProject.set(projectId, added);
  });
  return [...byProject].map(([projectId, { cardIds, commentIds }]) => new CommentsAdded(projectId, cardIds, commentIds, actor.userId));
}

function validComment(content: unknown, field: string): string {
  if (typeof content !== 'string' || !content.trim()) throw new InvalidCardInputError(field, 'must be a non-empty string');
  if (longerThan(content, MAX_COMMENT)) throw new InvalidCardInputError(field, `must be at most ${MAX_COMMENT} characters`);
  if (hasUnsafeText(content)) throw new InvalidCardInputError(field, UNSAFE_TEXT_MESSAGE);
  return content;
}
