import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { CardSummary, PreparedMove } from '../../card-hierarchy/index.js';
import {
  GroupingApi,
  type CardMembershipInfo,
  type GroupInfo,
  type GroupTypeChanges,
  type GroupTypeInfo,
  type NewCardGroups,
} from '../contracts/grouping.api.js';
import type { Group } from '../domain/group.entity.js';
import type { GroupType } from '../domain/group-type.entity.js';
import { nameProblem, readName } from '../domain/grouping.policy.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { cardMembershipsJsonSql, membershipsFromJson } from '../infrastructure/memberships.repository.js';
import { CardGroupsReader } from './card-groups.reader.js';
import { GroupTypesService } from './group-types.service.js';
import { GroupingAccess } from './grouping-access.service.js';
import { GroupsService } from './groups.service.js';
import { MembershipsService } from './memberships.service.js';

const typeInfo = (t: GroupType): GroupTypeInfo => ({
  id: t.id,
  projectId: t.projectId,
  name: t.name,
  oneGroupPerCard: t.oneGroupPerCard,
  createdAt: t.createdAt,
});

const groupInfo = (g: Group): GroupInfo => ({ id: g.id, typeId: g.typeId, title: g.title, cardId: g.cardId, position: g.position });

@Injectable()
export class GroupingApiImpl extends GroupingApi {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly access: GroupingAccess,
    private readonly types: GroupTypesRepository,
    private readonly typesService: GroupTypesService,
    private readonly groupsService: GroupsService,
    private readonly memberships: MembershipsService,
    private readonly reader: CardGroupsReader,
  ) {
    super();
  }

  groupTitleProblem(title: string): string | undefined {
    return nameProblem(title);
  }

  async groupTypes(projectId: number): Promise<GroupTypeInfo[]> {
    return (await this.types.ofProject(projectId)).map(typeInfo);
  }

  async requireGroupType(typeId: number, actor: Actor, mode: 'read' | 'write'): Promise<GroupTypeInfo> {
    return typeInfo(await this.access.groupType(typeId, actor, mode));
  }

  async findGroupType(projectId: number, name: string): Promise<GroupTypeInfo | null> {
    const found = await this.types.findByName(projectId, readName(name, 'name'));
    return found ? typeInfo(found) : null;
  }

  async createGroupType(projectId: number, input: { name: unknown; one_group_per_card?: unknown }, actor: Actor): Promise<GroupTypeInfo> {
    return typeInfo(await this.typesService.create(projectId, input, actor));
  }

  async updateGroupType(typeId: number, changes: GroupTypeChanges, actor: Actor) {
    const { type, previousName } = await this.typesService.update(typeId, changes, actor);
    return { type: typeInfo(type), previousName };
  }

  deleteGroupType(typeId: number, actor: Actor): Promise<void> {
    return this.typesService.delete(typeId, actor);
  }

  async ensureGroup(typeId: number, scopeCardId: number, title: string, actor: Actor): Promise<GroupInfo> {
    const [group] = await this.ensureGroups(typeId, scopeCardId, [title], actor);
    return group;
  }

  async ensureGroups(typeId: number, scopeCardId: number, titles: string[], actor: Actor): Promise<GroupInfo[]> {
    return (await this.groupsService.ensureMany(scopeCardId, typeId, titles, actor)).map(groupInfo);
  }

  addCardsToGroups(entries: Array<{ cardId: number; groupId: number }>, actor: Actor, options: { system?: boolean } = {}): Promise<void> {
    return this.memberships.joinExistingCards(entries, actor, options);
  }

  membershipsOf(cardIds: number[]): Promise<CardMembershipInfo[]> {
    return this.reader.membershipsOf(cardIds);
  }

  membershipsSql(cardIdsSql: string, projectIdSql?: string): string {
    return cardMembershipsJsonSql(cardIdsSql, projectIdSql);
  }

  membershipsRead(value: unknown): CardMembershipInfo[] {
    return membershipsFromJson(value);
  }

  groupChoices(typeId: number, card: CardSummary): Promise<Array<[number, string]>> {
    return this.reader.choices(typeId, card);
  }

  joinNewCards(entries: NewCardGroups[], actor: Actor, options?: { system?: boolean }): Promise<void> {
    return this.uow.run(() => this.memberships.joinNewCards(entries, actor, options));
  }

  lockForRelocation(move: PreparedMove, group?: { id: unknown; property: string }): Promise<void> {
    return this.uow.run(() => this.memberships.lockForRelocation(move, group));
  }

  moveIntoGroup(card: CardSummary, group: { id: unknown; property: string }, position: number | undefined, actor: Actor): Promise<void> {
    return this.uow.run(() => this.memberships.moveIntoGroup(card, group, position, actor));
  }

  leaveLostScopes(card: CardSummary, previousAncestorIds: number[], subtreeIds: number[], actor: Actor): Promise<void> {
    return this.uow.run(() => this.memberships.leaveLostScopes(card, previousAncestorIds, subtreeIds, actor));
  }

  lockForCardDeletion(subtreeIds: number[]): Promise<void> {
    return this.uow.run(() => this.memberships.lockForCardDeletion(subtreeIds));
  }

  addToGroup(cardId: number, input: { group_id: unknown; position?: unknown }, actor: Actor): Promise<void> {
    return this.memberships.addToGroup(cardId, input, actor);
  }

  removeFromGroup(cardId: number, input: { group_id: unknown }, actor: Actor): Promise<void> {
    return this.memberships.removeFromGroup(cardId, input, actor);
  }

  removeFromGroupType(cardId: number, input: { type_id: unknown }, actor: Actor): Promise<void> {
    return this.memberships.removeFromGroupType(cardId, input, actor);
  }
}
