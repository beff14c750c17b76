import type { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { CardHierarchyApi } from '../../card-hierarchy/index.js';
import type { FieldsApi } from '../../fields/index.js';

/**
 * A deletion's step 1 rows found late: the cards outside it whose
 * relationship values name one of `cardIds` (the subtree or project being
 * deleted, every card of it held already), locked to be touched, only if
 * free (NOWAIT; docs/ARCHITECTURE.md, "The one lock order"). One held
 * elsewhere is polled for without letting go of the deleted cards
 * (`UnitOfWork.untilFree`), the set read again at each try: a value may
 * have gone meanwhile, and none can come to name a held card. No savepoint
 * when nothing names them. The cards locked.
 */
export async function lockCardsNaming(
  deps: { uow: UnitOfWork; fields: FieldsApi; hierarchy: CardHierarchyApi },
  cardIds: number[],
): Promise<number[]> {
  const found = await deps.fields.cardsNaming(cardIds);
  if (!found.length) return found;
  return deps.uow.untilFree(async (attempt) => {
    const naming = attempt === 1 ? found : await deps.fields.cardsNaming(cardIds);
    await deps.hierarchy.lockCardsToTouch(naming, { wait: false });
    return naming;
  });
}
