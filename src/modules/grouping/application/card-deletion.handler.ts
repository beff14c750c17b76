import { Injectable } from '@nestjs/common';
import { CardDeleted } from '../../../shared/events/card.events.js';
import { OnAppEvent } from '../../../shared/events/on-app-event.decorator.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';

/**
 * A card deletion removes memberships (and groups scoped in the subtree) by
 * ON DELETE CASCADE, which locks membership rows as it goes. A move holding a
 * group's lock shifts those same rows; were the cascade to lock the group
 * only afterwards (the gap-closing trigger does), the two would deadlock. So
 * before the cascade (CardDeleted is published before the subtree goes), take
 * the groups' locks in the usual ascending order.
 */
@Injectable()
export class CardDeletionHandler {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly groups: GroupsRepository,
  ) {}

  @OnAppEvent(CardDeleted, { phase: 'in-tx' })
  async onCardDeleted(event: CardDeleted): Promise<void> {
    const cardId = Number(event.data.card_id);
    if (!Number.isSafeInteger(cardId) || cardId <= 0) return;
    await this.groups.lockForSubtreeDeletion(await this.hierarchy.subtreeIds(cardId));
  }
}
