import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { appendTo } from '../../../shared/domain/lists-by-key.js';
import { CardEventBatch, CardGroupChanged } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi, type CardSummary, type PreparedMove } from '../../card-hierarchy/index.js';
import type { NewCardGroups } from '../contracts/grouping.api.js';
import type { CardMembership } from '../domain/card-membership.entity.js';
import type { Group } from '../domain/group.entity.js';
import type { GroupType } from '../domain/group-type.entity.js';
import { InvalidGroupingInputError, OneGroupPerCardError } from '../domain/grouping.errors.js';
import { readPosition, slot } from '../domain/grouping.policy.js';
import { CardLocks } from '../infrastructure/card-locks.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';
import { MembershipsRepository } from '../infrastructure/memberships.repository.js';
import { GroupingAccess } from './grouping-access.service.js';

type Change = 'added' | 'removed' | 'reordered';

export interface MembershipEventOptions {
  /** System work (imports) is recorded as `log`. */
  system?: boolean;
}

/**
 * Card memberships and their places in the groups' columns. Lock order (see
 * CardLocks): the card (FOR NO KEY UPDATE, the lock of its touch, then its advisory lock; the steps `cards`
 * composes after a card write come with the card FOR UPDATE instead), the type row FOR SHARE, the
 * groups involved in ascending id, then the writes, then touching the card.
 * The card locks serialize the changes of one card (one group per card holds);
 * a group's lock serializes the shifts of its column (positions stay dense).
 */
@Injectable()
export class MembershipsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly access: GroupingAccess,
    private readonly cardLocks: CardLocks,
    private readonly types: GroupTypesRepository,
    private readonly groups: GroupsRepository,
    private readonly memberships: MembershipsRepository,
    private readonly events: EventBus,
  ) {}

  /** POST /cards/{id}/add-to-group: a further group of the type (409 on a one-group type already used). */
  async addToGroup(cardId: number, input: { group_id: unknown; position?: unknown }, actor: Actor): Promise<void> {
    const position = readPosition(input.position);
    await this.uow.run(async () => {
      const card = await this.lockCard(cardId, actor);
      const group = await this.access.bodyGroup(input.group_id, card, 'join');
      if (await this.join(card, group, position, actor, { leaveOthers: false })) await this.hierarchy.touch(card.id);
    });
  }

  /** POST /cards/{id}/remove-from-group: nothing to do when the card is not in the group. */
  async removeFromGroup(cardId: number, input: { group_id: unknown }, actor: Actor): Promise<void> {
    await this.uow.run(async () => {
      const card = await this.lockCard(cardId, actor);
      const group = await this.access.bodyGroup(input.group_id, card, 'leave');
      const type = await this.lockType(group.typeId, 'group_id');
      const locked = await this.groups.lockMany([group.id]);
      if (await this.leave(card, type, locked, actor)) await this.hierarchy.touch(card.id);
    });
  }

  /** POST /cards/{id}/remove-from-group-type: out of every group of the type. */
  async removeFromGroupType(cardId: number, input: { type_id: unknown }, actor: Actor): Promise<void> {
    await this.uow.run(async () => {
      const card = await this.lockCard(cardId, actor);
      const type = await this.lockType((await this.access.bodyType(input.type_id, card)).id, 'type_id');
      const current = await this.memberships.ofCard(card.id, type.id);
      const locked = await this.groups.lockMany(current.map((m) => m.groupId));
      if (await this.leave(card, type, locked, actor)) await this.hierarchy.touch(card.id);
    });
  }

  /**
   * New cards join groups (on their creation, in imports), last in each
   * column. The cards are the creation's, locked by it and seen by no one
   * else. They are not touched: created in this transaction, their
   * `updated_at` is already its time.
   */
  async joinNewCards(entries: NewCardGroups[], actor: Actor, options: MembershipEventOptions = {}): Promise<void> {
    const named = entries.flatMap(({ card, groupIds, property }) =>
      groupIds.filter((raw) => raw !== null && raw !== undefined).map((raw) => ({ raw, card, field: property })),
    );
    await this.append(named, [], actor, options);
  }

  /**
   * Existing cards join further groups (an import's matched cards), last in
   * each column, as add-to-group without a position does: a card already in
   * the group stays where it is, and a one-group type the card already uses
   * is a 409. The cards are locked FOR UPDATE with the caller's write access
   * checked (the step 1 of `cards`' lock order, which grouping's own use
   * cases on them wait for); the cards that joined a group are touched last.
   */
  joinExistingCards(entries: Array<{ cardId: number; groupId: number }>, actor: Actor, options: MembershipEventOptions = {}): Promise<void> {
    if (!entries.length) return Promise.resolve();
    return this.uow.run(async () => {
      const cards = new Map((await this.hierarchy.lockCards(entries.map((e) => e.cardId), actor, 'write')).map((c) => [c.id, c]));
      const named = entries.map(({ cardId, groupId }) => ({ raw: groupId, card: cards.get(cardId)!, field: 'group_id' }));
      const joined = await this.append(named, await this.memberships.forCards([...cards.keys()]), actor, options);
      await this.hierarchy.touchMany(joined);
    });
  }

  /**
   * The memberships of `named` (cards and the group ids naming their groups)
   * at the end of their columns, beside `current` (the cards' memberships
   * now): the groups read in one query, every type (FOR SHARE), then every
   * group, locked once in ascending id, the memberships written in one
   * statement and their entries as one batch. Returns the cards that joined.
   */
  private async append(
    named: Array<{ raw: unknown; card: CardSummary; field: string }>,
    current: Array<{ cardId: number; groupId: number; typeId: number }>,
    actor: Actor,
    options: MembershipEventOptions,
  ): Promise<number[]> {
    if (!named.length) return [];
    const found = await this.access.bodyGroupsToJoin(named);
    const types = new Map<number, GroupType>();
    for (const typeId of ascending(found.map((g) => g.typeId))) types.set(typeId, await this.lockType(typeId, 'group_id'));
    const locked = new Map((await this.groups.lockMany(found.map((g) => g.id))).map((g) => [g.id, g]));
    const next = await this.memberships.nextPositions([...locked.keys()]);
    const held = new HeldGroups(current);
    const rows: Array<{ cardId: number; groupId: number; typeId: number; position: number }> = [];
    const events: CardGroupChanged[] = [];
    named.forEach(({ card, field }, i) => {
      const group = locked.get(found[i].id);
      if (!group) throw new InvalidGroupingInputError(field, 'no such group');
      const type = types.get(group.typeId)!;
      if (held.has(card.id, group.id)) return;
      if (!type.mayAlsoJoin(group.id, held.ofType(card.id, type.id))) throw new OneGroupPerCardError();
      const position = next.get(group.id)!;
      next.set(group.id, position + 1);
      rows.push({ cardId: card.id, groupId: group.id, typeId: type.id, position });
      events.push(this.groupChanged('added', card.id, type, group, actor, { position }, options));
      held.add({ cardId: card.id, groupId: group.id, typeId: type.id });
    });
    await this.memberships.insertMany(rows);
    await this.publishAll(events);
    return ascending(rows.map((r) => r.cardId));
  }

  /**
   * A relocation's grouping locks, after the move has locked its card rows
   * (the siblings it shifts included; and the counter) and before it writes
   * any (`move` is where the card will be). `moveIntoGroup` and then
   * `leaveLostScopes` would each lock their groups, the second's possibly
   * below the first's; so every group the relocation will lock is locked
   * here, in one pass in grouping's order: the target's type and the types
   * of the groups `leaveLostScopes` may leave (FOR SHARE, ascending), then
   * the target, the card's other groups of its type and those groups
   * (ascending). The groups
   * the subtree's cards are in that are scoped neither at the card's new
   * ancestors nor inside the subtree include all `leaveLostScopes` removes.
   * The subtree's memberships cannot change meanwhile: the move holds its
   * cards FOR UPDATE, which grouping's use cases on them wait for.
   */
  async lockForRelocation(move: PreparedMove, target?: { id: unknown; property: string }): Promise<void> {
    const card = move.before;
    const where: CardSummary = { ...card, parentId: move.ancestorIds.at(-1)!, ancestorIds: move.ancestorIds, depth: move.ancestorIds.length };
    const group =
      target && target.id !== null && target.id !== undefined
        ? await this.access.bodyGroup(target.id, where, 'join', target.property)
        : undefined;
    const outside = await this.memberships.ofCardsScopedOutside(move.subtreeIds, [...move.ancestorIds, ...move.subtreeIds]);
    if (!group && !outside.length) return;
    for (const typeId of ascending([...(group ? [group.typeId] : []), ...outside.map((m) => m.typeId)])) {
      await this.types.lock(typeId, 'share');
    }
    const sameType = group ? await this.memberships.ofCard(card.id, group.typeId) : [];
    await this.groups.lockMany([...(group ? [group.id] : []), ...sameType.map((m) => m.groupId), ...outside.map((m) => m.groupId)]);
  }

  /**
   * A card deletion's grouping locks, before the cascade deletes the
   * subtree's memberships (whose trigger locks their groups) and the groups
   * scoped in it: their types FOR SHARE, then those groups, each ascending
   * id. The deletion holds the subtree FOR UPDATE, which grouping's use
   * cases on those cards wait for, so neither set changes meanwhile; with
   * no type there is no group either.
   */
  async lockForCardDeletion(subtreeIds: number[]): Promise<void> {
    if (!subtreeIds.length || !(await this.types.lockUsedBy(subtreeIds))) return;
    await this.groups.lockForSubtreeDeletion(subtreeIds);
  }

  /**
   * A group (and `position` in its column) on relocate, after the card has moved (`card` is
   * where it now is; the move holds it FOR UPDATE, and `lockForRelocation` the
   * type and the groups): the card moves into that group, which must be
   * scoped above its new place, at that place in the column, leaving its
   * other groups of the type.
   */
  async moveIntoGroup(card: CardSummary, target: { id: unknown; property: string }, position: number | undefined, actor: Actor): Promise<void> {
    if (target.id === null || target.id === undefined) return;
    const group = await this.access.bodyGroup(target.id, card, 'join', target.property);
    if (await this.join(card, group, position, actor, { leaveOthers: true })) await this.hierarchy.touch(card.id);
  }

  /**
   * After the move put `card` and its subtree (`subtreeIds`) under another
   * parent, in the relocation's transaction (the subtree, the old parent and
   * the new parent are held FOR UPDATE; a move or deletion of one of the new
   * parent's ancestors locks its subtree, so it waits for this one). A group
   * scoped at S is usable by the cards strictly under
   * S. The subtree's own structure is unchanged, so the scopes it lost are
   * exactly the old ancestors of the moved card that are no longer its
   * ancestors: every membership of a subtree card in a group scoped at one of
   * them goes (the gap-closing trigger renumbers the columns), each with a
   * `removed` entry in that card's stream, reason `moved_out_of_scope`.
   * Groups scoped at kept ancestors or inside the subtree stay usable.
   * Lock order as everywhere in grouping: the cards (here card-hierarchy's
   * FOR UPDATE) → type rows FOR SHARE, ascending id → groups, ascending id →
   * the delete → touching the cards (held since the first step, so one
   * statement touches them all, waiting for none). `lockForRelocation` took
   * the types and groups with `moveIntoGroup`'s, so here they are held
   * already.
   */
  async leaveLostScopes(card: CardSummary, previousAncestorIds: number[], subtreeIds: number[], actor: Actor): Promise<void> {
    const kept = new Set(card.ancestorIds);
    const lostScopes = previousAncestorIds.filter((id) => !kept.has(id));
    if (!lostScopes.length) return;
    // No grouping use case changes these cards' memberships while the move
    // holds them, so what we read now is what we remove after locking.
    const found = await this.memberships.ofCardsScopedAt(subtreeIds, lostScopes);
    if (!found.length) return;
    const types = new Map<number, GroupType>();
    for (const typeId of [...new Set(found.map((m) => m.typeId))].sort((a, b) => a - b)) {
      const type = await this.types.lock(typeId, 'share');
      if (type) types.set(type.id, type);
    }
    // A type deleted meanwhile took its groups with it: lockMany leaves them out.
    const locked = new Map((await this.groups.lockMany(found.map((m) => m.groupId))).filter((g) => types.has(g.typeId)).map((g) => [g.id, g]));
    const removed = await this.memberships.removeCards(subtreeIds, [...locked.keys()]);
    // One batch of entries and one touch for the subtree: per membership, a
    // 100 000-card subtree took 37 s to move out of its groups' scope.
    const events = removed.map((m) => {
      const group = locked.get(m.groupId)!;
      return this.groupChanged('removed', m.cardId, types.get(group.typeId)!, group, actor, { from_position: m.position, reason: 'moved_out_of_scope' }, {});
    });
    await this.publishAll(events);
    await this.hierarchy.touchMany(removed.map((m) => m.cardId));
  }

  /** Stream entries of the memberships that go away with a group or a group type, as one batch. */
  async publishRemovals(removed: CardMembership[], type: GroupType, titles: Map<number, string>, actor: Actor, reason: string): Promise<void> {
    const events = removed.map((m) =>
      this.groupChanged('removed', m.cardId, type, { id: m.groupId, title: titles.get(m.groupId) ?? '' }, actor, { from_position: m.position, reason }, {}),
    );
    await this.publishAll(events);
  }

  /** Locks a card for a membership change made outside card-hierarchy, then reads it afresh (its ancestry may have moved). */
  private async lockCard(cardId: number, actor: Actor): Promise<CardSummary> {
    await this.hierarchy.requireCard(cardId, actor, 'write');
    // The touch's own lock, first: the membership change marks the card changed last.
    await this.cardLocks.toTouch([cardId]);
    await this.cardLocks.memberships(cardId);
    return (await this.hierarchy.requireCard(cardId, actor, 'write')).card;
  }

  /** Returns whether anything changed. */
  private async join(
    card: CardSummary,
    target: Group,
    position: number | undefined,
    actor: Actor,
    options: MembershipEventOptions & { leaveOthers: boolean },
  ): Promise<boolean> {
    const type = await this.lockType(target.typeId, 'group_id');
    const current = await this.memberships.ofCard(card.id, type.id);
    const others = current.filter((m) => m.groupId !== target.id);
    if (!options.leaveOthers && !type.mayAlsoJoin(target.id, current.map((m) => m.groupId))) throw new OneGroupPerCardError();
    const locked = await this.groups.lockMany([target.id, ...(options.leaveOthers ? others.map((m) => m.groupId) : [])]);
    const group = locked.find((g) => g.id === target.id);
    if (!group) throw new InvalidGroupingInputError('group_id', 'no such group');
    const left = options.leaveOthers ? await this.leave(card, type, locked.filter((g) => g.id !== group.id), actor, options) : false;

    // Read the card's place only now: the group lock stops other moves from shifting it.
    const existing = await this.memberships.find(card.id, group.id);
    if (existing) {
      const to = position === undefined ? existing.position : slot(position, (await this.memberships.count(group.id)) - 1);
      if (to === existing.position) return left;
      await this.memberships.reorder(existing, to);
      await this.publish('reordered', card.id, type, group, actor, { from_position: existing.position, position: to }, options);
      return true;
    }
    const at = slot(position, await this.memberships.count(group.id));
    await this.memberships.insertAt({ cardId: card.id, groupId: group.id, typeId: type.id, position: at });
    await this.publish('added', card.id, type, group, actor, { position: at }, options);
    return true;
  }

  /** Takes the card out of the given (locked) groups; the trigger closes the gaps. Returns whether it was in any. */
  private async leave(card: CardSummary, type: GroupType, locked: Group[], actor: Actor, options: MembershipEventOptions = {}): Promise<boolean> {
    const byId = new Map(locked.map((g) => [g.id, g]));
    const removed = await this.memberships.remove(card.id, [...byId.keys()]);
    const events = removed.map((m) => this.groupChanged('removed', card.id, type, byId.get(m.groupId)!, actor, { from_position: m.position }, options));
    await this.publishAll(events);
    return removed.length > 0;
  }

  /** A type that vanished meanwhile took its groups with it: the body id names nothing any more. */
  private async lockType(typeId: number, field: 'group_id' | 'type_id'): Promise<GroupType> {
    const type = await this.types.lock(typeId, 'share');
    if (!type) throw new InvalidGroupingInputError(field, field === 'type_id' ? 'no such group type' : 'no such group');
    return type;
  }

  private publish(...event: Parameters<MembershipsService['groupChanged']>): Promise<void> {
    return this.events.publish(this.groupChanged(...event));
  }

  /** Many entries as one batch (one insert per chunk: `CardEventBatch`); none, no event. */
  private async publishAll(events: CardGroupChanged[]): Promise<void> {
    if (events.length) await this.events.publish(new CardEventBatch(events));
  }

  private groupChanged(
    change: Change,
    cardId: number,
    type: GroupType,
    group: { id: number; title: string },
    actor: Actor,
    extra: Record<string, unknown>,
    options: MembershipEventOptions,
  ): CardGroupChanged {
    return new CardGroupChanged({
      cardId,
      projectId: type.projectId,
      actorId: actor.userId,
      system: options.system,
      data: { change, group_id: group.id, group_title: group.title, type_id: type.id, type_name: type.name, ...extra },
    });
  }
}

/**
 * The groups cards are in, as `append` adds to them: looked up by card and
 * group, and by card and type, in constant time (a card joining 30 000 groups
 * in one import would otherwise scan its list once per group).
 */
class HeldGroups {
  private readonly pairs = new Set<string>();
  private readonly byType = new Map<string, number[]>();

  constructor(memberships: Array<{ cardId: number; groupId: number; typeId: number }>) {
    for (const m of memberships) this.add(m);
  }

  add(m: { cardId: number; groupId: number; typeId: number }): void {
    this.pairs.add(`${m.cardId}:${m.groupId}`);
    appendTo(this.byType, `${m.cardId}:${m.typeId}`, m.groupId);
  }

  has(cardId: number, groupId: number): boolean {
    return this.pairs.has(`${cardId}:${groupId}`);
  }

  ofType(cardId: number, typeId: number): number[] {
    return this.byType.get(`${cardId}:${typeId}`) ?? [];
  }
}

function ascending(ids: number[]): number[] {
  return [...new Set(ids)].sort((a, b) => a - b);
}
