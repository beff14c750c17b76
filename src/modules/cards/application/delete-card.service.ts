import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { GroupingApi } from '../../grouping/index.js';

/**
 * DELETE /cards/{id}: the subtree goes, and with it (ON DELETE CASCADE) its
 * field values, memberships and the groups scoped in it. The cascade locks
 * membership rows as it goes, and a column's gap-closing trigger locks its
 * group; a move holding a group's lock shifts those same rows. So the types
 * and then the groups are locked explicitly, in ascending id, before the
 * rows go (lock-order.ts).
 */
@Injectable()
export class DeleteCardService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly grouping: GroupingApi,
  ) {}

  delete(cardId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const doomed = await this.hierarchy.prepareDeletion(cardId, actor); // 1. parent, subtree, later siblings, 2. counter
      await this.grouping.lockForCardDeletion(doomed.subtreeIds); // 3.
      await this.hierarchy.finishDeletion(doomed, actor); // the rows, cascading to 3. and 4.
    });
  }
}
