import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import { GroupingApi, type GroupInfo, type GroupTypeInfo } from '../contracts/grouping.api.js';
import type { Group } from '../domain/group.entity.js';
import type { GroupType } from '../domain/group-type.entity.js';
import { readName } from '../domain/grouping.policy.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';
import { GroupTypesService } from './group-types.service.js';
import { GroupsService } from './groups.service.js';
import { MembershipsService } from './memberships.service.js';

const typeInfo = (t: GroupType): GroupTypeInfo => ({
  id: t.id,
  projectId: t.projectId,
  name: t.name,
  oneGroupPerCard: t.oneGroupPerCard,
  attributeId: t.attributeId,
});

const groupInfo = (g: Group): GroupInfo => ({ id: g.id, typeId: g.typeId, title: g.title, cardId: g.cardId, position: g.position });

@Injectable()
export class GroupingApiImpl extends GroupingApi {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly workspace: WorkspaceApi,
    private readonly types: GroupTypesRepository,
    private readonly groups: GroupsRepository,
    private readonly typesService: GroupTypesService,
    private readonly groupsService: GroupsService,
    private readonly memberships: MembershipsService,
  ) {
    super();
  }

  async groupTypes(projectId: number): Promise<GroupTypeInfo[]> {
    return (await this.types.ofProject(projectId)).map(typeInfo);
  }

  ensureGroupType(projectId: number, name: string, oneGroupPerCard: boolean, actor: Actor): Promise<GroupTypeInfo> {
    const valid = readName(name, 'name');
    return this.uow.run(async () => {
      await this.workspace.requireProject(projectId, actor, 'read');
      const found = await this.types.findByName(projectId, valid);
      return typeInfo(found ?? (await this.typesService.createIn(projectId, valid, oneGroupPerCard, actor)));
    });
  }

  ensureGroup(typeId: number, scopeCardId: number, title: string, actor: Actor): Promise<GroupInfo> {
    return this.uow.run(async () => {
      await this.hierarchy.requireCard(scopeCardId, actor, 'read');
      const found = await this.groups.findByTitle(typeId, scopeCardId, title.trim());
      if (found) return groupInfo(found);
      const created = await this.groupsService.create(scopeCardId, { type_id: typeId, title }, actor);
      return groupInfo((await this.groups.find(created.id))!);
    });
  }

  addCardToGroup(cardId: number, groupId: number, actor: Actor, options: { system?: boolean } = {}): Promise<void> {
    return this.memberships.addForApi(cardId, groupId, actor, options);
  }
}
