import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { Page, PageRequest } from '../../../shared/http/pagination.js';
import { pageOffset } from '../../../shared/http/pagination.js';
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
  ) {}

  async list(cardId: number, actor: Actor, page: PageRequest): Promise<Page<StreamEntryView>> {
    await this.access.require(cardId, actor, 'read');
    return this.stream.page(cardId, page.perPage, pageOffset(page));
  }

  /** A comment is one stream entry of kind `comment`, written by the stream writer (the answer is that entry). */
  comment(cardId: number, content: unknown, actor: Actor): Promise<StreamEntryView> {
    if (typeof content !== 'string' || !content.trim()) throw new InvalidCardInputError('content', 'must be a non-empty string');
    if (content.length > MAX_COMMENT) throw new InvalidCardInputError('content', `must be at most ${MAX_COMMENT} characters`);
    return this.uow.run(async () => {
      const { card } = await this.access.require(cardId, actor, 'write');
      if (!(await this.cards.holdKey(cardId))) throw new CardNotFoundError();
      return this.recorder.comment(cardId, card.projectId, actor.userId, content);
    });
  }
}
