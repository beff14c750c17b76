import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { FieldsApi } from '../../fields/index.js';
import { GroupingApi } from '../../grouping/index.js';
import { lockCardsNaming } from './naming-card-locks.js';

/**
 * DELETE /cards/{id}: the subtree goes, and with it (ON DELETE CASCADE) its
 * field values, memberships and the groups scoped in it. The cascade locks
 * membership rows as it goes, and a column's gap-closing trigger locks its
 * group; a move holding a group's lock shifts those same rows. So the types
 * and then the groups are locked explicitly, in ascending id, before the
 * rows go (docs/ARCHITECTURE.md, "The one lock order").
 *
 * Cards outside the subtree whose relationship values name a card of it
 * change too: those values go (DESIGN.md §4), recorded on their streams and
 * marked in their `updated_at` like any other change (§9). Which cards those
 * are is only sure once the subtree is held (no value naming it can be added
 * then), after the counter row: so they are locked as step-1 rows found late,
 * only if free (NOWAIT; on 55P03 only that step is tried again, the subtree
 * still held: `lockCardsNaming`), with the lock of the touch that ends the
 * write.
 */
@Injectable()
export class DeleteCardService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly grouping: GroupingApi,
    private readonly fields: FieldsApi,
  ) {}

  delete(cardId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const doomed = await this.hierarchy.prepareDeletion(cardId, actor); // 1. parent, subtree, later siblings, 2. counter
      const naming = await lockCardsNaming({ uow: this.uow, fields: this.fields, hierarchy: this.hierarchy }, doomed.subtreeIds); // 1., found late: only if free
      await this.grouping.lockForCardDeletion(doomed.subtreeIds); // 3.
      // None found, none to remove: no value naming a held card can be added meanwhile.
      const changed = naming.length ? await this.fields.removeValuesNaming(doomed.subtreeIds, actor) : []; // 4.
      await this.hierarchy.finishDeletion(doomed, actor); // the rows, cascading to 3. and 4.
      await this.hierarchy.touchMany(changed); // 5.
    });
  }
}
