import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi, ProjectCardLocks } from '../../card-hierarchy/index.js';
import { FieldsApi } from '../../fields/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import { lockCardsNaming } from './naming-card-locks.js';

/**
 * DELETE /projects/{id}: the project row, then (on ProjectDeleted, in this
 * transaction) each module's rows of the project: its cards with their
 * values, memberships and streams, its counters, fields and group types.
 *
 * Relationship values may name cards of other projects of the team
 * (DESIGN.md §4): the cards of those projects that name a card of this one
 * lose those values, and like any change (§9) that is recorded on their
 * streams (a `pop` by the deleting user, as a card's deletion records it)
 * and marks their `updated_at`; the foreign key's cascade would remove the
 * values unseen. Which cards those are is only sure once no value can come
 * to name a card of the project: once every one of its cards is held FOR
 * UPDATE (the lock a value's foreign key waits for). So the project's cards
 * are locked first (step 1, ascending), and the cards naming them are locked
 * as step-1 rows found late, only if free (NOWAIT): a value write holding
 * one may be waiting for a card of the project (docs/ARCHITECTURE.md, "The
 * one lock order"). On 55P03 only that step is tried again, the project's
 * cards still held (`lockCardsNaming`): locking them all may take longer
 * than the unit's whole budget for retries, and a long write holding a
 * naming card (an import in another project) failed every attempt.
 */
@Injectable()
export class DeleteProjectService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly workspace: WorkspaceApi,
    private readonly projectCards: ProjectCardLocks,
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
  ) {}

  delete(projectId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const project = await this.workspace.prepareProjectDeletion(projectId, actor); // 0. the project row, admins only
      const cardIds = await this.projectCards.lockProjectCards(projectId); // 1. every card of the project
      const naming = await lockCardsNaming({ uow: this.uow, fields: this.fields, hierarchy: this.hierarchy }, cardIds); // 1., found late: only if free
      // None found, none to remove: no value naming a held card can be added meanwhile.
      const changed = naming.length ? await this.fields.removeValuesNaming(cardIds, actor) : []; // 4.
      await this.workspace.finishProjectDeletion(project, actor); // each module's rows (ProjectDeleted), then the project row
      await this.hierarchy.touchMany(changed); // 5.
    });
  }
}
