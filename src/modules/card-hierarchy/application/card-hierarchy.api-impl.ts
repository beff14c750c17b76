import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { ListingRequest } from '../../../shared/http/cursor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { AccessMode } from '../../workspace/index.js';
import {
  type CreateChildOptions,
  type CreationAlong,
  type CreatedChild,
  CardHierarchyApi,
  type CardAccess,
  type CardChanges,
  type CardJsonRow,
  type ChildrenListing,
  type ChildrenOf,
  type CardRecord,
  type CardSummary,
  type ChildCreations,
  type DoomedSubtree,
  type MovedCard,
  type PreparedMove,
  type ProjectCardCounters,
  type ProjectListing,
  type ProjectPage,
  type TeamCard,
  type TouchAlong,
  type TouchedCard,
  type TreeMove,
} from '../contracts/card-hierarchy.api.js';
import { recordAlongSql } from '../activity/card-stream.recorder.js';
import { CardStreamRepository } from '../activity/card-stream.repository.js';
import { CardListingQueries } from '../infrastructure/card-listing.queries.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';
import { CardAccessService } from './card-access.service.js';
import { CardStreamService } from './card-stream.service.js';
import { CardTreeService, toRecord } from './card-tree.service.js';
import { MoveCardService } from './move-card.service.js';
import { ProjectCardsService } from './project-cards.service.js';

const summary = ({ position: _p, hidden: _h, createdAt: _c, updatedAt: _u, ...s }: CardRow): CardSummary => s;

@Injectable()
export class CardHierarchyApiImpl extends CardHierarchyApi {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly access: CardAccessService,
    private readonly cards: CardTreeRepository,
    private readonly listingQueries: CardListingQueries,
    private readonly tree: CardTreeService,
    private readonly moves: MoveCardService,
    private readonly listing: ProjectCardsService,
    private readonly stream: CardStreamService,
    private readonly streamEntries: CardStreamRepository,
  ) {
    super();
  }

  async requireCard(cardId: number, actor: Actor, mode: AccessMode, alsoRead?: Record<string, string>): Promise<CardAccess> {
    const { card, role, read } = await this.access.require(cardId, actor, mode, alsoRead);
    return { card: summary(card), role, read };
  }

  async lockCardToTouch(cardId: number, actor: Actor, mode: AccessMode, alsoRead?: Record<string, string>): Promise<CardAccess> {
    if (!this.uow.inTransaction) throw new Error('lockCardToTouch must run inside a unit of work');
    const { card, role, read } = await this.access.lockToTouch(cardId, actor, mode, alsoRead);
    return { card: summary(card), role, read };
  }

  async touchCurrent(cardId: number, actor: Actor, mode: AccessMode, along: TouchAlong, alsoRead: Record<string, string> = {}): Promise<TouchedCard | null> {
    // Without a unit, the events of what it wrote along would have no statement to belong to.
    if (!this.uow.inUnit) throw new Error('touchCurrent must run inside a unit of work');
    const touched = await this.cards.touchCurrent(cardId, actor.userId, this.access.allowsSql(mode), along, alsoRead);
    return touched && { card: touched.card, read: touched.extras, along: touched.along };
  }

  async readableRecord(cardId: number, actor: Actor, alsoRead: Record<string, string>): Promise<{ record: CardRecord; read: Record<string, unknown> }> {
    const { card, read } = await this.access.require(cardId, actor, 'read', alsoRead);
    return { record: toRecord(card), read };
  }

  async recordWith(cardId: number, alsoRead: Record<string, string>): Promise<{ record: CardRecord; read: Record<string, unknown> } | null> {
    const found = await this.cards.findWith(cardId, alsoRead, [], false);
    return found ? { record: toRecord(found.card), read: found.extras } : null;
  }

  async records(cardIds: number[]): Promise<CardRecord[]> {
    const byId = new Map((await this.cards.findMany([...new Set(cardIds)])).map((c) => [c.id, c]));
    return cardIds.flatMap((id) => (byId.has(id) ? [toRecord(byId.get(id)!)] : []));
  }

  async jsonRows(
    cardIds: number[],
    alsoRead?: Record<string, string>,
    alsoReadParam?: unknown,
    childrenOf?: ChildrenOf,
  ): Promise<{ cards: CardJsonRow[]; read: Record<string, unknown> }> {
    const { rows, extras } = await this.listingQueries.jsonRows(cardIds, alsoRead, alsoReadParam, childrenOf);
    return { cards: rows, read: extras };
  }

  children(cardId: number, actor: Actor, options: ChildrenListing): Promise<{ cards: CardJsonRow[]; read: Record<string, unknown>; rest: number[] }> {
    return this.tree.children(cardId, actor, options);
  }

  listProject(projectId: number, actor: Actor, page: ListingRequest, options: ProjectListing): Promise<ProjectPage> {
    return this.listing.list(projectId, actor, page, options);
  }

  createChild(parentId: number, title: unknown, actor: Actor, options?: CreateChildOptions): Promise<CreatedChild> {
    return this.tree.createChild(parentId, title, actor, options);
  }

  recordAlongSql(source: string, options?: { system?: boolean }): string {
    return recordAlongSql(source, options);
  }

  createTopLevelCard(project: { projectId: number; organizationId: number; title: string }, actorId: number): Promise<number> {
    return this.tree.createTopLevelCard(project, actorId);
  }

  update(cardId: number, changes: CardChanges, actor: Actor, options?: { system?: boolean }): Promise<void> {
    return this.tree.update(cardId, changes, actor, options);
  }

  updateTitles(entries: Array<{ cardId: number; title: unknown }>, actor: Actor, options?: { system?: boolean }): Promise<CardRecord[]> {
    return this.tree.updateTitles(entries, actor, options);
  }

  createChildren(
    entries: Array<{ parentId: number; title: unknown }>,
    actor: Actor,
    options?: { system?: boolean; along?: CreationAlong },
  ): Promise<CardRecord[]> {
    return this.tree.createChildren(entries, actor, options);
  }

  openCreations(parentId: number, actor: Actor, options?: { system?: boolean }): Promise<ChildCreations> {
    return this.tree.openCreations(parentId, actor, options);
  }

  cardsWithTitles(projectId: number, titles: string[]): Promise<Array<{ id: number; title: string }>> {
    return this.cards.cardsWithTitles(projectId, titles);
  }

  cardCounters(projectId: number): Promise<ProjectCardCounters | null> {
    return this.cards.cardCounters(projectId);
  }

  cardsWithRefs(projectId: number, refs: number[]): Promise<Array<{ id: number; ref: number }>> {
    return this.cards.cardsWithRefs(projectId, refs);
  }

  childrenWithTitles(parentIds: number[], titles: string[]): Promise<Array<{ parentId: number; title: string }>> {
    return this.cards.childrenWithTitles(parentIds, titles);
  }

  commentsWithContents(cardIds: number[], userId: number, contents: string[]): Promise<Array<{ cardId: number; content: string }>> {
    return this.streamEntries.commentsWithContents(cardIds, userId, contents);
  }

  async addComment(cardId: number, content: string, actor: Actor): Promise<void> {
    await this.stream.comment(cardId, content, actor);
  }

  addComments(entries: Array<{ cardId: number; content: string }>, actor: Actor): Promise<void> {
    return this.stream.commentMany(entries, actor);
  }

  setArchived(cardId: number, archived: boolean, actor: Actor): Promise<void> {
    return this.tree.setArchived(cardId, archived, actor);
  }

  prepareMove(cardId: number, move: TreeMove, actor: Actor): Promise<PreparedMove> {
    return this.moves.prepare(cardId, move, actor);
  }

  finishMove(prepared: PreparedMove, actor: Actor): Promise<MovedCard> {
    return this.moves.finish(prepared, actor);
  }

  prepareDeletion(cardId: number, actor: Actor): Promise<DoomedSubtree> {
    return this.tree.prepareDeletion(cardId, actor);
  }

  finishDeletion(doomed: DoomedSubtree, actor: Actor): Promise<void> {
    return this.tree.finishDeletion(doomed, actor);
  }

  setModelId(cardId: number, modelId: number | null): Promise<void> {
    return this.uow.run(() => this.cards.update(cardId, { modelId }));
  }

  async lockCards(cardIds: number[], actor: Actor, mode: AccessMode): Promise<CardSummary[]> {
    // Row locks outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('lockCards must run inside a unit of work');
    return (await this.access.lockAll(cardIds, actor, mode)).map(summary);
  }

  setModelIds(entries: Array<{ cardId: number; modelId: number | null }>): Promise<void> {
    return this.uow.run(() => this.cards.setModelIds(entries));
  }

  touch(cardId: number): Promise<void> {
    return this.touchMany([cardId]);
  }

  touchMany(cardIds: number[]): Promise<void> {
    return this.uow.run(() => this.cards.touchMany(cardIds));
  }

  async teamCards(organizationId: number, options: { exceptCardId?: number; limit: number }): Promise<TeamCard[]> {
    const limit = Math.max(0, Math.trunc(options.limit));
    if (!limit) return [];
    // Card ids start at 1, so 0 excepts nothing.
    return this.listingQueries.teamCards(organizationId, options.exceptCardId ?? 0, limit);
  }

  async lockCardsShared(cardIds: number[], options: { wait?: boolean } = {}): Promise<void> {
    // A row lock outside a transaction would be released at once: a caller's bug.
    if (!this.uow.inTransaction) throw new Error('lockCardsShared must run inside a unit of work');
    await this.cards.keyShareMany(cardIds, options.wait ?? true);
  }

  async lockCardsToTouch(cardIds: number[], options: { wait?: boolean } = {}): Promise<void> {
    if (!this.uow.inTransaction) throw new Error('lockCardsToTouch must run inside a unit of work');
    await this.cards.noKeyUpdateMany(cardIds, options.wait ?? true);
  }

  lockTeamCardsShared(cardIds: number[], organizationId: number, options: { wait?: boolean } = {}): Promise<number[]> {
    if (!this.uow.inTransaction) throw new Error('lockTeamCardsShared must run inside a unit of work');
    return this.cards.keyShareMany(cardIds, options.wait ?? true, organizationId);
  }

  subtreeIds(cardId: number): Promise<number[]> {
    return this.cards.subtreeIds(cardId);
  }
}
