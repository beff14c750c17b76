import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { ProjectCardLocks } from '../contracts/project-card-locks.api.js';
import { TreeBusyError } from '../domain/card.errors.js';
import { CardTreeRepository } from '../infrastructure/card-tree.repository.js';
import { ProjectCardLockQueries } from '../infrastructure/project-card-locks.queries.js';

/** Rounds before giving up on a project whose cards keep being created under the lock. */
const MAX_ROUNDS = 20;

@Injectable()
export class ProjectCardLocksService extends ProjectCardLocks {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly queries: ProjectCardLockQueries,
    private readonly cards: CardTreeRepository,
  ) {
    super();
  }

  /**
   * One statement locks the cards its snapshot sees. A card created under a
   * parent the statement waited for is not among them (its creation
   * committed after the snapshot), nor one created under that card since:
   * so the count is read afresh until none is missing (the held cards cannot
   * go, so an equal count means the same cards). A missing card above every
   * card held is waited for, still in ascending order; one below is taken
   * only if free (NOWAIT: otherwise 55P03, and the unit of work runs the
   * whole unit again), as the tree's own locks do (TreeLocksService).
   */
  async lockProjectCards(projectId: number): Promise<number[]> {
    // Row locks outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('lockProjectCards must run inside a unit of work');
    let held = await this.queries.lockAll(projectId);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if ((await this.queries.count(projectId)) === held.length) return held;
      const missing = await this.queries.othersThan(projectId, held);
      const aboveAll = !held.length || missing[0] > held[held.length - 1];
      held = [...held, ...(await this.cards.forUpdateMany(missing, aboveAll))].sort((a, b) => a - b);
    }
    throw new TreeBusyError();
  }
}
