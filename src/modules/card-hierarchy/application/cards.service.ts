import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import {
  CardArchived,
  CardCreated,
  CardDeleted,
  CardRestored,
  CardStateChanged,
  CardUpdated,
} from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { CardState, CardView } from '../contracts/card-hierarchy.api.js';
import { assertNotTopLevel, isCardState } from '../domain/card-tree.policy.js';
import { CardNotFoundError, InvalidCardInputError, TreeBusyError } from '../domain/card.errors.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';
import { CardAccessService } from './card-access.service.js';
import { CardExtensions } from './card-extensions.js';
import { CardViewsService } from './card-views.service.js';

export const MAX_TITLE = 1024;

/** How often a deletion re-locks when the card moved to another parent meanwhile. */
const MAX_LOCK_ROUNDS = 5;

export interface CreateCardInput {
  title: unknown;
  [extensionKey: string]: unknown;
}

export interface UpdateCardInput {
  title?: unknown;
  state?: unknown;
}

export function validTitle(title: unknown): string {
  if (typeof title !== 'string' || !title.trim()) throw new InvalidCardInputError('title', 'must be a non-empty string');
  if (title.length > MAX_TITLE) throw new InvalidCardInputError('title', `must be at most ${MAX_TITLE} characters`);
  return title;
}

function validState(state: unknown): CardState {
  if (!isCardState(state)) {
    throw new InvalidCardInputError(
      'state',
      'must be one of undecided, dropped, accepted, in_progress, waiting, completed, closed',
    );
  }
  return state;
}

/** Card use cases other than relocation (see relocate-card.service.ts). */
@Injectable()
export class CardsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cards: CardTreeRepository,
    private readonly access: CardAccessService,
    private readonly views: CardViewsService,
    private readonly extensions: CardExtensions,
    private readonly events: EventBus,
  ) {}

  async get(cardId: number, actor: Actor): Promise<CardView> {
    await this.access.require(cardId, actor, 'read');
    return this.views.one(cardId, actor);
  }

  async children(cardId: number, actor: Actor): Promise<CardView[]> {
    await this.access.require(cardId, actor, 'read');
    return this.views.many(await this.cards.children(cardId), actor);
  }

  /** New cards are `undecided` and last among their siblings (DESIGN.md §4). */
  async create(parentId: number, input: CreateCardInput, actor: Actor): Promise<CardView> {
    const title = validTitle(input.title);
    const extra = Object.entries(input).filter(([k, v]) => k !== 'title' && v !== undefined);
    for (const [key] of extra) {
      if (!this.extensions.forCreationKey(key)) throw new InvalidCardInputError(key, 'is not supported on card creation yet');
    }
    const { card, extended } = await this.uow.run(async () => {
      // The parent's lock orders this insert with sibling moves (positions) and
      // with subtree-wide changes (ancestors, hidden), which lock the parent too.
      // It is taken first and the access check reads the locked row; nothing is
      // written before the check (404 outside the team, 403 for viewers).
      const parent = await this.lockCard(parentId);
      await this.access.requireFor(parent, actor, 'write');
      const card = await this.cards.insertChild(parent, title, actor.userId);
      if (!card) throw new CardNotFoundError();
      await this.events.publish(
        new CardCreated({ ...this.eventBase(card, actor), data: { title, ref: card.ref, parent_id: parent.id } }),
      );
      let extended = false;
      for (const ext of this.extensions.all()) {
        const keys = ext.creationKeys?.filter((k) => input[k] !== undefined) ?? [];
        if (keys.length && ext.onCreate) {
          await ext.onCreate(card, Object.fromEntries(keys.map((k) => [k, input[k]])), actor);
          extended = true;
        }
      }
      return { card, extended };
    });
    // The row INSERT … RETURNING gave is the card as committed, unless an
    // extension changed it (or its values) during the creation: then read it back.
    return extended ? this.views.one(card.id, actor) : this.views.created(card, actor);
  }

  /** Creates a project's top-level card (ref 0) and its counters; called inside project creation. */
  async createRoot(projectId: number, organizationId: number, title: string, actorId: number): Promise<number> {
    const card = await this.cards.insert({
      projectId,
      organizationId,
      parent: null,
      ref: 0,
      title: title.slice(0, MAX_TITLE),
      position: 0,
      createdBy: actorId,
    });
    await this.cards.createCounters(projectId, card.id);
    await this.events.publish(new CardCreated({ cardId: card.id, projectId, actorId, data: { title, ref: 0 } }));
    return card.id;
  }

  async update(cardId: number, input: UpdateCardInput, actor: Actor): Promise<CardView> {
    if (input.title === undefined && input.state === undefined) {
      throw new InvalidCardInputError('title', 'give a title and/or a state');
    }
    const title = input.title === undefined ? undefined : validTitle(input.title);
    const state = input.state === undefined ? undefined : validState(input.state);
    await this.uow.run(async () => {
      await this.access.require(cardId, actor, 'write');
      const card = await this.lockCard(cardId);
      await this.cards.update(cardId, { title, state });
      if (title !== undefined && title !== card.title) {
        await this.events.publish(new CardUpdated({ ...this.eventBase(card, actor), data: { title: { from: card.title, to: title } } }));
      }
      if (state !== undefined && state !== card.state) {
        await this.events.publish(new CardStateChanged({ ...this.eventBase(card, actor), data: { from: card.state, to: state } }));
      }
    });
    return this.views.one(cardId, actor);
  }

  setState(cardId: number, state: unknown, actor: Actor): Promise<CardView> {
    return this.update(cardId, { state: validState(state) }, actor);
  }

  /** Archiving hides the card and its subtree from listings; the counters follow. */
  async setArchived(cardId: number, archived: boolean, actor: Actor): Promise<CardView> {
    await this.uow.run(async () => {
      const { card: found } = await this.access.require(cardId, actor, 'write');
      assertNotTopLevel(found, archived ? 'archived' : 'restored');
      // The whole subtree, so that no card is added under it unseen while its
      // `hidden` flags and the visible count are recomputed.
      await this.cards.lockSubtree([], cardId);
      const card = await this.lockCard(cardId);
      if (card.isArchived === archived) return;
      const before = await this.cards.subtreeCounts(cardId);
      await this.cards.setArchived(cardId, archived);
      const after = await this.cards.subtreeCounts(cardId);
      await this.cards.adjustCounters(card.projectId, 0, after.visible - before.visible);
      const Event = archived ? CardArchived : CardRestored;
      await this.events.publish(new Event(this.eventBase(card, actor)));
    });
    return this.views.one(cardId, actor);
  }

  /** Deletes the card and its subtree; the entry goes to the parent's stream, which survives. */
  delete(cardId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const { card: found } = await this.access.require(cardId, actor, 'write');
      assertNotTopLevel(found, 'deleted');
      const card = await this.lockForDeletion(found);
      const counts = await this.cards.subtreeCounts(cardId);
      // Counters before the rows go: the cascade reaches other modules' rows
      // (and their locks); creation takes the counters before those too.
      await this.cards.adjustCounters(card.projectId, -counts.all, -counts.visible);
      await this.events.publish(
        new CardDeleted({
          cardId: card.parentId!,
          projectId: card.projectId,
          actorId: actor.userId,
          data: { card_id: card.id, ref: card.ref, title: card.title, subtree_size: counts.all },
        }),
      );
      await this.cards.delete(cardId);
      await this.cards.closeGap(card.parentId!, card.position);
    });
  }

  /** Locks a card (FOR UPDATE) and reads it afresh; 404 when a concurrent deletion won. */
  private async lockCard(cardId: number): Promise<CardRow> {
    const [card] = await this.cards.lockMany([cardId]);
    if (!card) throw new CardNotFoundError();
    return card;
  }

  /**
   * Locks the parent (its children's positions close up) and the whole subtree
   * (so the counts match what the cascade deletes). The card may have moved
   * between reading it and locking it; then the parent we locked is not its
   * parent any more, and we lock the new one.
   */
  private async lockForDeletion(found: CardRow): Promise<CardRow> {
    let parentId = found.parentId!;
    for (let round = 0; round < MAX_LOCK_ROUNDS; round++) {
      await this.cards.lockSubtree([parentId], found.id);
      const [card] = await this.cards.findMany([found.id]);
      if (!card) throw new CardNotFoundError();
      if (card.parentId === parentId) return card;
      parentId = card.parentId!;
    }
    throw new TreeBusyError();
  }

  private eventBase(card: CardRow, actor: Actor) {
    return { cardId: card.id, projectId: card.projectId, actorId: actor.userId };
  }
}

