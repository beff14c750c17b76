import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { foldCase, lowerCase } from '../../../shared/domain/fold-case.js';
import { mapViolations } from '../../../shared/persistence/sql-errors.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import type { Group } from '../domain/group.entity.js';
import type { CardMembership } from '../domain/card-membership.entity.js';
import type { GroupType } from '../domain/group-type.entity.js';
import { DuplicateGroupTitleError, GroupNotFoundError, InvalidGroupingInputError } from '../domain/grouping.errors.js';
import { readId, readName, readPosition, sameTitle, slot } from '../domain/grouping.policy.js';
import { CardLocks } from '../infrastructure/card-locks.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';
import { MembershipsRepository } from '../infrastructure/memberships.repository.js';
import { GroupingAccess } from './grouping-access.service.js';
import { toGroupView, type GroupView } from './grouping.views.js';
import { MembershipsService } from './memberships.service.js';

export interface CreateGroupInput {
  type_id: unknown;
  title: unknown;
  position?: unknown;
}

export interface UpdateGroupInput {
  title?: unknown;
  position?: unknown;
}

/**
 * Groups scoped at a card. Changing a scope's groups locks the type row
 * (FOR NO KEY UPDATE), then that scope's groups in ascending id, so their
 * positions stay dense; a title taken in the scope (any case) → 409.
 */
@Injectable()
export class GroupsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly access: GroupingAccess,
    private readonly cardLocks: CardLocks,
    private readonly types: GroupTypesRepository,
    private readonly groups: GroupsRepository,
    private readonly memberships: MembershipsRepository,
    private readonly membershipsService: MembershipsService,
  ) {}

  /** GET /cards/{id}/groups: groups scoped at the card or at any of its ancestors (what its children may join). */
  async availableUnder(cardId: number, query: { type_id?: unknown }, actor: Actor): Promise<GroupView[]> {
    const { card } = await this.hierarchy.requireCard(cardId, actor, 'read');
    let typeId: number | undefined;
    if (query.type_id !== undefined) typeId = (await this.access.bodyType(query.type_id, card)).id;
    const groups = await this.groups.scopedAt([...card.ancestorIds, card.id], typeId);
    return groups.map(toGroupView);
  }

  async get(groupId: number, actor: Actor): Promise<GroupView> {
    return toGroupView(await this.access.group(groupId, actor, 'read'));
  }

  /** GET /group-types/{id}/groups: the type's groups in every scope. */
  async ofType(typeId: number, actor: Actor): Promise<GroupView[]> {
    const type = await this.access.groupType(typeId, actor, 'read');
    return (await this.groups.ofType(type.id)).map(toGroupView);
  }

  /** POST /cards/{id}/groups: a group of `type_id` scoped at the card, last unless a position is given. */
  async create(scopeCardId: number, input: CreateGroupInput, actor: Actor): Promise<GroupView> {
    const title = readName(input.title, 'title');
    const position = readPosition(input.position);
    const typeId = readId(input.type_id, 'type_id');
    return this.uow.run(async () => {
      const { card } = await this.hierarchy.requireCard(scopeCardId, actor, 'write');
      await this.access.bodyType(typeId, card);
      await this.cardLocks.keyShare([card.id]); // the group's foreign key to its scope card, taken first (see CardLocks)
      const type = await this.lockType(typeId, 'type_id');
      const siblings = await this.groups.lockScope(type.id, card.id);
      if (siblings.some((g) => sameTitle(g.title, title))) throw new DuplicateGroupTitleError(title);
      const group = await this.unique(title, () =>
        this.groups.insert({
          typeId: type.id,
          projectId: card.projectId,
          organizationId: card.organizationId,
          cardId: card.id,
          title,
          position: slot(position, siblings.length),
          createdBy: actor.userId,
        }),
      );
      return toGroupView(group);
    });
  }

  /**
   * The groups of those titles in a type and scope, in the order asked: an
   * existing one of the title (exactly, else in any case: `findByName`),
   * else a new one, last in the scope. For many titles at once (an import's
   * context column): the type is locked once, the scope's titles read in one
   * statement and the missing groups inserted in one, where `create` per
   * title would lock and read every sibling each time (quadratic).
   * Appending moves no sibling, so the siblings are not locked: every change
   * of a scope's groups locks the type first.
   */
  async ensureMany(scopeCardId: number, typeId: number, rawTitles: string[], actor: Actor): Promise<Group[]> {
    const titles = rawTitles.map((t) => readName(t, 'title'));
    return this.uow.run(async () => {
      const { card } = await this.hierarchy.requireCard(scopeCardId, actor, 'write');
      await this.access.bodyType(typeId, card);
      await this.cardLocks.keyShare([card.id]); // as in create
      const type = await this.lockType(typeId, 'type_id');
      const existing = await this.groups.ofScope(type.id, card.id);
      const stored = new TitleIndex(existing);
      const missing = [...new Map(titles.filter((t) => !stored.find(t)).map((t) => [foldCase(t), t])).values()];
      const scope = { typeId: type.id, projectId: card.projectId, organizationId: card.organizationId, cardId: card.id, createdBy: actor.userId };
      // Under the type's lock only a title lower() folds as another but foldCase does not can break the index.
      const created = new TitleIndex(await this.unique(missing[0] ?? '', () => this.groups.insertLast(scope, missing, existing.length)));
      return titles.map((title) => stored.find(title) ?? created.find(title)!);
    });
  }

  /** PUT /groups/{id}: new title and/or place among its scope's groups. */
  async update(groupId: number, input: UpdateGroupInput, actor: Actor): Promise<GroupView> {
    if (input.title === undefined && input.position === undefined) {
      throw new InvalidGroupingInputError('title', 'give a title and/or a position');
    }
    const title = input.title === undefined ? undefined : readName(input.title, 'title');
    const position = readPosition(input.position);
    return this.uow.run(async () => {
      const found = await this.access.group(groupId, actor, 'write');
      await this.lockType(found.typeId);
      const siblings = await this.groups.lockScope(found.typeId, found.cardId);
      const group = siblings.find((g) => g.id === found.id);
      if (!group) throw new GroupNotFoundError();
      const renamed = title !== undefined && title !== group.title ? title : undefined;
      if (renamed !== undefined && siblings.some((g) => g.id !== group.id && sameTitle(g.title, renamed))) {
        throw new DuplicateGroupTitleError(renamed);
      }
      const to = position === undefined ? undefined : slot(position, siblings.length - 1);
      // One statement: a second update of the group would take its scope card out of order (see GroupsRepository.update).
      const change = () => this.groups.update(group, { title: renamed, position: to });
      await (renamed === undefined ? change() : this.unique(renamed, change));
      const updated = await this.groups.find(group.id);
      return toGroupView(updated!);
    });
  }

  /**
   * DELETE /groups/{id}: its memberships go (each member's stream says so),
   * the cards stay and are marked changed.
   */
  delete(groupId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const found = await this.access.group(groupId, actor, 'write');
      const members = await this.lockMembers(() => this.memberships.ofGroups([found.id]), async () => {
        const type = await this.lockType(found.typeId);
        const siblings = await this.groups.lockScope(found.typeId, found.cardId);
        const group = siblings.find((g) => g.id === found.id);
        if (!group) throw new GroupNotFoundError();
        return { type, group };
      });
      const { type, group } = members.locked;
      await this.membershipsService.publishRemovals(members.rows, type, new Map([[group.id, group.title]]), actor, 'group_deleted');
      await this.groups.delete(group);
      await this.hierarchy.touchMany(members.rows.map((m) => m.cardId));
    });
  }

  /**
   * For removals of many memberships at once (a group, a group type): locks
   * the member cards first (NO KEY UPDATE, the lock of the touch that ends
   * the removal: `CardLocks.toTouch`), then runs `lock` (type and groups),
   * then reads the members again. A card that joined in between is locked
   * late, out of order, so only if no other write holds it; if one does, the
   * unit of work runs the whole removal again rather than wait for that
   * write, which may be waiting for these groups. The caller's touch, last
   * in the lock order, marks them all in one statement
   * (`CardHierarchyApi.touchMany`): one per card took 27 s for a group of
   * 100 000 members.
   */
  async lockMembers<T>(
    read: () => Promise<CardMembership[]>,
    lock: () => Promise<T>,
  ): Promise<{ rows: CardMembership[]; locked: T }> {
    const before = new Set((await read()).map((m) => m.cardId));
    await this.cardLocks.toTouch([...before]);
    const locked = await lock();
    const rows = await read();
    await this.cardLocks.toTouch(rows.map((m) => m.cardId).filter((id) => !before.has(id)), { wait: false });
    return { rows, locked };
  }

  private async lockType(typeId: number, field?: string): Promise<GroupType> {
    const type = await this.types.lock(typeId, 'update');
    if (!type) throw field ? new InvalidGroupingInputError(field, 'no such group type') : new GroupNotFoundError();
    return type;
  }

  /** The unique index is the last word on titles (a concurrent insert with another case). */
  private unique<T>(title: string, work: () => Promise<T>): Promise<T> {
    return mapViolations(work, { unique: () => new DuplicateGroupTitleError(title) });
  }
}

/**
 * `findByName` over many groups at once: the exact title first, else the
 * first (by position) that lower() folds as the title, as the unique index
 * does, else the first `foldCase` folds as it.
 */
class TitleIndex {
  private readonly exact = new Map<string, Group>();
  private readonly lowered = new Map<string, Group>();
  private readonly folded = new Map<string, Group>();

  constructor(groups: Group[]) {
    for (const g of groups) {
      if (!this.exact.has(g.title)) this.exact.set(g.title, g);
      if (!this.lowered.has(lowerCase(g.title))) this.lowered.set(lowerCase(g.title), g);
      if (!this.folded.has(foldCase(g.title))) this.folded.set(foldCase(g.title), g);
    }
  }

  find(title: string): Group | undefined {
    return this.exact.get(title) ?? this.lowered.get(lowerCase(title)) ?? this.folded.get(foldCase(title));
  }
}
