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

  registerExtension(extension: CardExtension): void {
    this.extensions.register(extension);
  }
}
