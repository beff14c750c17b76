import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { GroupingApi } from '../../grouping/index.js';
import type { CardView } from '../contracts/cards.api.js';
import { CardViewsService } from './card-views.service.js';

export interface RelocateInput {
  parent_id?: unknown;
  position?: number;
  group_id?: unknown;
}

/** POST /cards/{id}/relocate: a move in the tree, into a group's column, or both (docs/ARCHITECTURE.md, "The one lock order"). */
@Injectable()
export class RelocateCardService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly grouping: GroupingApi,
    private readonly views: CardViewsService,
  ) {}

  async relocate(cardId: number, input: RelocateInput, actor: Actor): Promise<CardView> {
    const intoGroup = input.group_id !== undefined && input.group_id !== null;
    const group = intoGroup ? { id: input.group_id, property: 'group_id' } : undefined;
    await this.uow.run(async () => {
      // 1–2. The tree's rows, locked: every card the move changes, the
      // siblings it shifts included; nothing written yet. With a group_id,
      // `position` is the card's place in that group's column (DESIGN.md §4),
      // not among its siblings.
      const move = await this.hierarchy.prepareMove(cardId, { parentId: input.parent_id, position: group ? undefined : input.position }, actor);
      // 3. Every type and group the steps below lock, in one ascending pass:
      // moveIntoGroup and leaveLostScopes would take theirs one after the other.
      if (group || move.parentChanged) await this.grouping.lockForRelocation(move, group);
      const moved = await this.hierarchy.finishMove(move, actor);
      // Groups, with the card at its new place: the group must be scoped above it.
      if (group) await this.grouping.moveIntoGroup(moved.after, group, input.position, actor);
      // After the join, so a group_id has already taken the card out of its type's other groups.
      if (moved.parentChanged) await this.grouping.leaveLostScopes(moved.after, moved.before.ancestorIds, move.subtreeIds, actor);
    });
    return this.views.one(cardId);
  }
}
