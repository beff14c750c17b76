import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { idFrom } from '../../../shared/domain/ids.js';
import { readPosition } from '../../../shared/domain/positions.js';
import { CardMoved } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { MovedCard, PreparedMove, TreeMove } from '../contracts/card-hierarchy.api.js';
import { assertDepthAllowed, assertNoCycle, assertNotTopLevel, targetPosition } from '../domain/card-tree.policy.js';
import { InvalidCardInputError } from '../domain/card.errors.js';
import { moveLocks } from '../domain/tree-lock.policy.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';
import { CardAccessService } from './card-access.service.js';
import { toRecord } from './card-tree.service.js';
import { TreeLocksService } from './tree-locks.service.js';

/** What `prepare` locked and read, kept for `finish` (by the `PreparedMove` it returned). */
interface HeldMove {
  card: CardRow;
  parent: CardRow;
  oldParent: CardRow | null;
  position: number | undefined;
  /** The transaction that holds the locks. */
  manager: unknown;
}

/**
 * The tree part of a relocation; `cards` composes it with group moves. It
 * comes in two steps so that every group the relocation will lock is
 * locked between them, in one pass (lock order: card rows, counter, groups),
 * before anything changes. `prepare` locks every card row the move changes,
 * the siblings it shifts included, so `finish` waits for no card.
 */
@Injectable()
export class MoveCardService {
  private readonly held = new WeakMap<PreparedMove, HeldMove>();

  constructor(
    private readonly uow: UnitOfWork,
    private readonly cards: CardTreeRepository,
    private readonly access: CardAccessService,
    private readonly treeLocks: TreeLocksService,
    private readonly events: EventBus,
    private readonly config: AppConfig,
  ) {}

  /**
   * Locks the card rows the move changes (its subtree and the new parent
   * among them) before the cycle check, so two racing moves can never make
   * a cycle (`lockTree`, `moveLocks`); and the project's counter row when the
   * move will change what is hidden. Writes nothing.
   */
  async prepare(cardId: number, request: TreeMove, actor: Actor): Promise<PreparedMove> {
    // Row locks outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('prepareMove must run inside a unit of work');
    const position = readPosition(request.position, (message) => new InvalidCardInputError('position', message));
    const { card: found } = await this.access.require(cardId, actor, 'write');
    // The top-level card never moves, whatever the body says (409, not a 400 about its missing parent).
    assertNotTopLevel(found, 'relocated');
    const parentId =
      request.parentId === undefined || request.parentId === null ? found.parentId! : readParentId(request.parentId);
    const { card, parent, oldParent, subtreeIds } = await this.lockTree(found, parentId, position);
    const parentChanged = card.parentId !== parent.id;
    if (parentChanged && (oldParent?.hidden ?? false) !== parent.hidden) await this.cards.lockCounters(card.projectId);
    const prepared: PreparedMove = { before: toRecord(card), ancestorIds: [...parent.ancestorIds, parent.id], parentChanged, subtreeIds };
    this.held.set(prepared, { card, parent, oldParent, position, manager: this.uow.manager });
    return prepared;
  }

  /**
   * Moves a card (and its subtree) under the new parent and/or to the new
   * position that `prepare` locked, in the same transaction. With neither a
   * new parent nor a position, nothing moves.
   */
  async finish(prepared: PreparedMove, actor: Actor): Promise<MovedCard> {
    const held = this.held.get(prepared);
    if (!held || held.manager !== this.uow.manager) throw new Error('finishMove needs the locks of prepareMove, in its transaction');
    this.held.delete(prepared);
    const { card, parent, oldParent, position } = held;
    const { before, parentChanged } = prepared;
    if (!parentChanged && position === undefined) return { before, after: before, parentChanged };
    const slot = await this.moveLocked(card, parent, oldParent, position);
    await this.events.publish(
      new CardMoved({
        cardId: card.id,
        projectId: card.projectId,
        actorId: actor.userId,
        data: { from_parent_id: card.parentId, to_parent_id: parent.id, from_position: card.position, to_position: slot },
      }),
    );
    const after = (await this.cards.find(card.id))!;
    return { before, after: toRecord(after), parentChanged };
  }

  /**
   * Step 1 of the move (`moveLocks`): the card, its old parent, the new
   * parent, the subtree when the parent changes, and every sibling whose
   * position the move shifts; then the cycle check, on the locked new
   * parent's ancestry (any move that could change it waits for ours).
   */
  private async lockTree(
    found: CardRow,
    parentId: number,
    position: number | undefined,
  ): Promise<{ card: CardRow; parent: CardRow; oldParent: CardRow | null; subtreeIds: number[] }> {
    const cardId = found.id;
    const seen = new Map([[cardId, found]]);
    if (parentId !== found.parentId) {
      const target = await this.cards.find(parentId);
      if (target?.projectId !== found.projectId) throw new InvalidCardInputError('parent_id', 'must be a card of the same project');
      seen.set(parentId, target);
    }
    const held = await this.treeLocks.lock(moveLocks(cardId, parentId, position), seen);
    const { parentId: oldParentId } = held.get(cardId)!;
    const byId = new Map((await this.cards.findMany([cardId, oldParentId!, parentId])).map((c) => [c.id, c]));
    const card = byId.get(cardId)!;
    const parent = byId.get(parentId)!;
    assertNoCycle(card.id, parent.id, parent.ancestorIds);
    const subtreeIds = [...held.values()].filter((c) => c.inSubtree).map((c) => c.id).sort((a, b) => a - b);
    if (card.parentId !== parent.id) await this.assertFits(card, parent, subtreeIds);
    return { card, parent, oldParent: byId.get(oldParentId!) ?? null, subtreeIds };
  }

  /**
   * The subtree's deepest card stays within MAX_CARD_DEPTH under its new
   * parent; a move that deepens nothing is always allowed. A subtree of s
   * cards is at most s − 1 levels high, so its deepest card is read only
   * when that bound does not settle it.
   */
  private async assertFits(card: CardRow, parent: CardRow, subtreeIds: number[]): Promise<void> {
    const deeper = parent.depth + 1 - card.depth;
    const max = this.config.maxCardDepth;
    if (deeper <= 0 || parent.depth + subtreeIds.length <= max) return;
    assertDepthAllowed((await this.cards.deepest(subtreeIds)) + deeper, max);
  }

  /** Answers the position the card ends at, the requested one clamped to its new siblings. */
  private async moveLocked(card: CardRow, parent: CardRow, oldParent: CardRow | null, position: number | undefined): Promise<number> {
    if (card.parentId === parent.id) {
      const last = (await this.cards.childCount(parent.id)) - 1;
      const slot = targetPosition(position, last);
      await this.cards.reorder(card, slot);
      return slot;
    }
    await this.cards.closeGap(card.parentId!, card.position);
    const slot = targetPosition(position, await this.cards.childCount(parent.id));
    await this.cards.openGap(parent.id, slot);
    await this.cards.reparent(card, parent, slot);
    if ((oldParent?.hidden ?? false) !== parent.hidden) {
      const before = await this.cards.subtreeCounts(card.id);
      await this.cards.refreshHidden(card.id);
      const after = await this.cards.subtreeCounts(card.id);
      await this.cards.adjustCounters(card.projectId, 0, after.visible - before.visible);
    }
    return slot;
  }
}

function readParentId(value: unknown): number {
  const id = idFrom(value);
  if (id === undefined) throw new InvalidCardInputError('parent_id', 'must be a card id');
  return id;
}
