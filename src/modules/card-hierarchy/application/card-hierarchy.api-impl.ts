import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { AccessMode } from '../../workspace/index.js';
import {
  CardHierarchyApi,
  type CardAccess,
  type CardExtension,
  type CardSummary,
  type CardView,
  type TeamCard,
} from '../contracts/card-hierarchy.api.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';
import { CardAccessService } from './card-access.service.js';
import { CardExtensions } from './card-extensions.js';
import { CardViewsService } from './card-views.service.js';

const summary = ({ position: _p, hidden: _h, createdAt: _c, updatedAt: _u, ...s }: CardRow): CardSummary => s;

@Injectable()
export class CardHierarchyApiImpl extends CardHierarchyApi {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly access: CardAccessService,
    private readonly cards: CardTreeRepository,
    private readonly views: CardViewsService,
    private readonly extensions: CardExtensions,
  ) {
    super();
  }

  async requireCard(cardId: number, actor: Actor, mode: AccessMode): Promise<CardAccess> {
    const { card, role } = await this.access.require(cardId, actor, mode);
    return { card: summary(card), role };
  }

  async cardsInOrganization(cardIds: number[], organizationId: number): Promise<CardSummary[]> {
    const rows = await this.cards.findMany([...new Set(cardIds)]);
    return rows.filter((c) => c.organizationId === organizationId).map(summary);
  }

  view(cardId: number, actor: Actor | null): Promise<CardView> {
    return this.views.one(cardId, actor);
  }

  setModelId(cardId: number, modelId: number | null): Promise<void> {
    return this.uow.run(() => this.cards.update(cardId, { modelId }));
  }

  touch(cardId: number): Promise<void> {
    return this.uow.run(() => this.cards.update(cardId, {}));
  }

  async teamCards(organizationId: number, options: { exceptCardId?: number; limit: number }): Promise<TeamCard[]> {
    const limit = Math.max(0, Math.trunc(options.limit));
    if (!limit) return [];
    // Card ids start at 1, so 0 excepts nothing.
    return this.cards.teamCards(organizationId, options.exceptCardId ?? 0, limit);
  }

  async lockCardsShared(cardIds: number[]): Promise<void> {
    // A row lock outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('lockCardsShared must run inside a unit of work');
    await this.cards.keyShareMany(cardIds);
  }

  subtreeIds(cardId: number): Promise<number[]> {
    return this.cards.subtreeIds(cardId);
  }

  registerExtension(extension: CardExtension): void {
    this.extensions.register(extension);
  }
}
