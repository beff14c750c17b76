import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config.js';
import type { Actor } from '../../../shared/domain/actor.js';
import {
  CardArchived,
  CardCreated,
  CardEventBatch,
  CardDeleted,
  CardRestored,
  CardStateChanged,
  CardUpdated,
} from '../../../shared/events/card.events.js';
import { firstCharacters, longerThan } from '../../../shared/domain/safe-text.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type {
  CardChanges,
  CardJsonRow,
  ChildrenListing,
  ListedCardsReads,
  CardRecord,
  CardState,
  ChildCreations,
  CreateChildOptions,
  CreatedChild,
  CreationAlong,
  DoomedSubtree,
  ReadyCreation,
  SentCreation,
} from '../contracts/card-hierarchy.api.js';
import { assertDepthAllowed, assertNotTopLevel, isCardState } from '../domain/card-tree.policy.js';
import { CardNotFoundError, InvalidCardInputError } from '../domain/card.errors.js';
import { deletionLocks, subtreeLocks } from '../domain/tree-lock.policy.js';
import { CardListingQueries } from '../infrastructure/card-listing.queries.js';
import { CardTreeRepository, type CardRow, type ChildrenInsert } from '../infrastructure/card-tree.repository.js';
import { CardAccessService } from './card-access.service.js';
import { TreeLocksService } from './tree-locks.service.js';

export const MAX_TITLE = 1024;

export function validTitle(title: unknown): string {
  if (typeof title !== 'string' || !title.trim()) throw new InvalidCardInputError('title', 'must be a non-empty string');
  if (longerThan(title, MAX_TITLE)) throw new InvalidCardInputError('title', `must be at most ${MAX_TITLE} characters`);
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

/** Strips the row's internal columns: what other modules may see of a card row. */
export function toRecord({ hidden: _hidden, ...record }: CardRow): CardRecord {
  return record;
}

/** Card tree use cases other than moves (see move-card.service.ts). Each joins the caller's unit of work. */
@Injectable()
export class CardTreeService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cards: CardTreeRepository,
    private readonly listing: CardListingQueries,
    private readonly access: CardAccessService,
    private readonly treeLocks: TreeLocksService,
    private readonly events: EventBus,
    private readonly config: AppConfig,
  ) {}

  async children(cardId: number, actor: Actor, options: ChildrenListing): Promise<{ cards: CardJsonRow[]; read: Record<string, unknown>; rest: number[] }> {
    await this.access.require(cardId, actor, 'read');
    const { rows, extras, rest } = await this.listing.children(cardId, options.withArchived, options.limit, options.alsoRead, options.ofListedCards);
    return { cards: rows, read: extras, rest };
  }

  /**
   * New cards are `undecided` and last among their siblings (DESIGN.md §4).
   * The creation is one statement (see insertChildSql): the parent locked,
   * the caller's write access checked, the card inserted with its
   * `card.created` entry (writing along). On its own it needs no transaction
   * around it (`UnitOfWork.runStatement`, unless an in-tx handler of its
   * `card.created` needs one); in the caller's it joins it. The
   * parent's lock orders it with sibling moves (positions) and subtree-wide
   * changes (ancestors, hidden), which lock the parent too.
   */
  async createChild(parentId: number, rawTitle: unknown, actor: Actor, options: CreateChildOptions = {}): Promise<CreatedChild> {
    const title = validTitle(rawTitle);
    const created = await this.uow.runStatement(async () => {
      // The depth cap in the parent's check: a number of the configuration, so one statement text.
      const allowed = `(${this.access.allowsSql('write')}) AND c.depth < ${this.config.maxCardDepth}`;
      const inserted = await this.cards.insertChildChecked(parentId, title, actor.userId, allowed, options.alsoRead ?? {}, options);
      if (inserted) await this.events.publish(createdBatch([inserted.card], actor, options.system));
      return inserted;
    }, [CardEventBatch]);
    if (!created) {
      // Nothing written: the parent's check says why (404 outside the team or
      // for no such card, 403 for viewers), then its depth; past both, the project is gone.
      const { card: parent } = await this.access.require(parentId, actor, 'write');
      assertDepthAllowed(parent.depth + 1, this.config.maxCardDepth);
      throw new CardNotFoundError();
    }
    return { card: toRecord(created.card), read: created.extras };
  }

  /**
   * Bulk creation (imports): many new cards under parents of one project, in
   * one statement. Locks the parents in ascending id (as a single creation
   * locks its parent), checks write access once, and records the
   * `card.created` entries as one batch.
   */
  createChildren(
    entries: Array<{ parentId: number; title: unknown }>,
    actor: Actor,
    options: { system?: boolean; along?: CreationAlong } = {},
  ): Promise<CardRecord[]> {
    const valid = entries.map((e) => ({ parentId: e.parentId, title: validTitle(e.title) }));
    if (!valid.length) return Promise.resolve([]);
    return this.uow.run(async () => {
      const parentIds = [...new Set(valid.map((e) => e.parentId))];
      const parents = await this.access.lockAll(parentIds, actor, 'write');
      if (parents.some((p) => p.projectId !== parents[0].projectId)) throw new Error('createChildren takes parents of one project');
      for (const parent of parents) assertDepthAllowed(parent.depth + 1, this.config.maxCardDepth);
      // The insert records the `card.created` entries itself (writing along).
      const cards = await this.cards.insertChildren(parents, valid, actor.userId, options);
      await this.events.publish(createdBatch(cards, actor, options.system));
      return cards.map(toRecord);
    });
  }

  /** CardHierarchyApi.openCreations: the parent locked and the access checked as `createChildren` does, once. */
  async openCreations(parentId: number, actor: Actor, options: { system?: boolean } = {}): Promise<ChildCreations> {
    // Row locks outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('openCreations must run inside a unit of work');
    const [parent] = await this.access.lockAll([parentId], actor, 'write');
    assertDepthAllowed(parent.depth + 1, this.config.maxCardDepth);
    return new ChildCreationSequence(this.uow, parent, this.cards, this.events, actor, options);
  }

  /** Bulk title change (imports): see CardHierarchyApi.updateTitles. */
  updateTitles(entries: Array<{ cardId: number; title: unknown }>, actor: Actor, options: { system?: boolean } = {}): Promise<CardRecord[]> {
    const valid = entries.map((e) => ({ cardId: e.cardId, title: validTitle(e.title) }));
    if (!valid.length) return Promise.resolve([]);
    return this.uow.run(async () => {
      const cards = await this.access.lockAll(valid.map((e) => e.cardId), actor, 'write');
      if (cards.some((c) => c.projectId !== cards[0].projectId)) throw new Error('updateTitles takes cards of one project');
      await this.cards.setTitles(valid);
      const byId = new Map(cards.map((c) => [c.id, c]));
      const changed = valid.filter((e) => byId.get(e.cardId)!.title !== e.title);
      await this.events.publish(
        new CardEventBatch(
          changed.map(({ cardId, title }) => {
            const card = byId.get(cardId)!;
            return new CardUpdated({ ...this.eventBase(card, actor), system: options.system, data: { title: { from: card.title, to: title } } });
          }),
        ),
      );
      for (const { cardId, title } of valid) byId.get(cardId)!.title = title;
      return cards.map(toRecord);
    });
  }

  /** Creates a project's top-level card (ref 0) and its counters, inside project creation. */
  createTopLevelCard(project: { projectId: number; organizationId: number; title: string }, actorId: number): Promise<number> {
    const { projectId, organizationId, title } = project;
    return this.uow.run(async () => {
      const card = await this.cards.insert({
        projectId,
        organizationId,
        parent: null,
        ref: 0,
        title: firstCharacters(title, MAX_TITLE),
        position: 0,
        createdBy: actorId,
      });
      await this.cards.createCounters(projectId);
      await this.events.publish(new CardCreated({ cardId: card.id, projectId, actorId, data: { title, ref: 0 } }));
      return card.id;
    });
  }

  update(cardId: number, input: CardChanges, actor: Actor, options: { system?: boolean } = {}): Promise<void> {
    if (input.title === undefined && input.state === undefined) {
      throw new InvalidCardInputError('title', 'give a title and/or a state');
    }
    const title = input.title === undefined ? undefined : validTitle(input.title);
    const state = input.state === undefined ? undefined : validState(input.state);
    return this.uow.run(async () => {
      const { card } = await this.access.lock(cardId, actor, 'write');
      await this.cards.update(cardId, { title, state });
      if (title !== undefined && title !== card.title) {
        await this.events.publish(
          new CardUpdated({ ...this.eventBase(card, actor), system: options.system, data: { title: { from: card.title, to: title } } }),
        );
      }
      if (state !== undefined && state !== card.state) {
        await this.events.publish(
          new CardStateChanged({ ...this.eventBase(card, actor), system: options.system, data: { from: card.state, to: state } }),
        );
      }
    });
  }

  /** Archiving hides the card and its subtree from listings; the counters follow. */
  setArchived(cardId: number, archived: boolean, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const { card: found } = await this.access.require(cardId, actor, 'write');
      assertNotTopLevel(found, archived ? 'archived' : 'restored');
      // The whole subtree, so that no card is added under it unseen while its
      // `hidden` flags and the visible count are recomputed.
      const held = await this.treeLocks.lock(subtreeLocks(cardId), new Map());
      const card = await this.lockCard(cardId);
      if (card.isArchived === archived) return;
      const visibleBefore = [...held.values()].filter((c) => c.inSubtree && !c.hidden).length;
      await this.cards.setArchived(cardId, archived);
      const after = await this.cards.subtreeCounts(cardId);
      await this.cards.adjustCounters(card.projectId, 0, after.visible - visibleBefore);
      const Event = archived ? CardArchived : CardRestored;
      await this.events.publish(new Event({ ...this.eventBase(card, actor), data: {} }));
    });
  }

  /**
   * First step of a deletion: the cards it changes, locked in step 1 (the
   * parent, the whole subtree, whose counts must match what the cascade
   * deletes, and the later siblings, whose gap `finishDeletion` closes),
   * then the subtree taken out of the project's totals (step 2, the counter
   * row). Where the card is comes from its locked row: a move that won the
   * race is followed.
   */
  async prepareDeletion(cardId: number, actor: Actor): Promise<DoomedSubtree> {
    // Row locks outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('prepareDeletion must run inside a unit of work');
    const { card: found } = await this.access.require(cardId, actor, 'write');
    assertNotTopLevel(found, 'deleted');
    const held = await this.treeLocks.lock(deletionLocks(found.id), new Map([[found.id, found]]));
    const subtree = [...held.values()].filter((c) => c.inSubtree);
    await this.cards.adjustCounters(found.projectId, -subtree.length, -subtree.filter((c) => !c.hidden).length);
    const { parentId, ancestorIds } = held.get(found.id)!;
    return {
      card: { ...toRecord(found), parentId, ancestorIds: ancestorIds!, depth: ancestorIds!.length },
      subtreeIds: subtree.map((c) => c.id).sort((a, b) => a - b),
    };
  }

  /** Second step: `card.deleted` on the parent's stream (which survives), the rows (cascading), the gap. */
  async finishDeletion(doomed: DoomedSubtree, actor: Actor): Promise<void> {
    const [card] = await this.cards.findMany([doomed.card.id]);
    if (!card || card.parentId !== doomed.card.parentId) throw new Error('finishDeletion needs the locks of prepareDeletion');
    await this.events.publish(
      new CardDeleted({
        cardId: card.parentId!,
        projectId: card.projectId,
        actorId: actor.userId,
        data: { card_id: card.id, ref: card.ref, title: card.title, subtree_size: doomed.subtreeIds.length },
      }),
    );
    await this.cards.delete(card.id);
    await this.cards.closeGap(card.parentId!, card.position);
  }

  /** Locks a card (FOR UPDATE) and reads it afresh; 404 when a concurrent deletion won. */
  private async lockCard(cardId: number): Promise<CardRow> {
    const [card] = await this.cards.lockMany([cardId]);
    if (!card) throw new CardNotFoundError();
    return card;
  }

  private eventBase(card: CardRow, actor: Actor) {
    return { cardId: card.id, projectId: card.projectId, actorId: actor.userId };
  }
}

/** The `card.created` events of a creation, as one batch whose entries its statement recorded (writing along). */
function createdBatch(cards: CardRow[], actor: Actor, system: boolean | undefined): CardEventBatch {
  return new CardEventBatch(
    cards.map(
      (card) =>
        new CardCreated({
          cardId: card.id,
          projectId: card.projectId,
          actorId: actor.userId,
          system,
          data: { title: card.title, ref: card.ref, parent_id: card.parentId ?? undefined },
        }),
    ),
    true,
  );
}

/**
 * `CardHierarchyApi.openCreations`: creations under a parent this
 * transaction has locked. Each statement reads the positions and the counter
 * the one before wrote, so it is sent only once that one has returned; that
 * is checked here rather than left to the order in which promises settle.
 */
class ChildCreationSequence implements ChildCreations {
  private inDatabase = false;
  private readonly sentInserts = new WeakSet<ChildrenInsert>();
  /** The transaction that holds the parent's lock: the sequence skips the lock, so it must not leave it. */
  private readonly transaction: object;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly parent: CardRow,
    private readonly cards: CardTreeRepository,
    private readonly events: EventBus,
    private readonly actor: Actor,
    private readonly options: { system?: boolean },
  ) {
    this.transaction = uow.manager;
  }

  ready(titles: unknown[], options: { along?: CreationAlong } = {}): ReadyCreation {
    const entries = titles.map((title) => ({ parentId: this.parent.id, title: validTitle(title) }));
    const insert = this.cards.childrenInsert([this.parent], entries, this.actor.userId, { ...this.options, along: options.along });
    return { send: () => this.send(insert) };
  }

  private async send(insert: ChildrenInsert): Promise<SentCreation> {
    if (this.uow.manager !== this.transaction) throw new Error('a creation is sent in the transaction that opened its sequence');
    if (this.inDatabase) throw new Error('a creation is sent only once the one before it has returned');
    // Twice would create the cards twice.
    if (this.sentInserts.has(insert)) throw new Error('a ready creation is sent once');
    this.sentInserts.add(insert);
    this.inDatabase = true;
    const cards = await insert.run(); // a failure leaves the flag set: the transaction is aborted, nothing may follow
    this.inDatabase = false;
    return {
      cards: cards.map(toRecord),
      publish: () => this.events.publish(createdBatch(cards, this.actor, this.options.system)),
    };
  }
}
