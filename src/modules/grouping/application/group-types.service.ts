import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork, sqlState } from '../../../shared/persistence/unit-of-work.js';
import { FieldsApi } from '../../fields/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { GroupType } from '../domain/group-type.entity.js';
import {
  DuplicateGroupTypeNameError,
  GroupTypeNotFoundError,
  InvalidGroupingInputError,
  SeveralGroupsPerCardError,
} from '../domain/grouping.errors.js';
import { readName } from '../domain/grouping.policy.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';
import { MembershipsRepository } from '../infrastructure/memberships.repository.js';
import { GroupingAccess } from './grouping-access.service.js';
import { toGroupTypeView, type GroupTypeView } from './grouping.views.js';
import { GroupsService } from './groups.service.js';
import { MembershipsService } from './memberships.service.js';

export interface CreateGroupTypeInput {
  name: unknown;
  one_group_per_card?: unknown;
}

export interface UpdateGroupTypeInput {
  name?: unknown;
  one_group_per_card?: unknown;
}

function readFlag(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new InvalidGroupingInputError('one_group_per_card', 'must be a boolean');
  return value;
}

/**
 * Group types of a project. Each owns a `group_type` field, created, renamed
 * and deleted through FieldsApi in the same transaction (so the field's name
 * is the type's name, unique among the project's fields).
 */
@Injectable()
export class GroupTypesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly workspace: WorkspaceApi,
    private readonly fields: FieldsApi,
    private readonly access: GroupingAccess,
    private readonly types: GroupTypesRepository,
    private readonly groups: GroupsRepository,
    private readonly memberships: MembershipsRepository,
    private readonly groupsService: GroupsService,
    private readonly membershipsService: MembershipsService,
  ) {}

  async list(projectId: number, actor: Actor): Promise<GroupTypeView[]> {
    await this.workspace.requireProject(projectId, actor, 'read');
    return (await this.types.ofProject(projectId)).map(toGroupTypeView);
  }

  async get(typeId: number, actor: Actor): Promise<GroupTypeView> {
    return toGroupTypeView(await this.access.groupType(typeId, actor, 'read'));
  }

  async create(projectId: number, input: CreateGroupTypeInput, actor: Actor): Promise<GroupTypeView> {
    const name = readName(input.name, 'name');
    const oneGroupPerCard = readFlag(input.one_group_per_card) ?? false;
    return toGroupTypeView(await this.uow.run(() => this.createIn(projectId, name, oneGroupPerCard, actor)));
  }

  /** Creation inside the caller's transaction (also used by GroupingApi.ensureGroupType). */
  async createIn(projectId: number, name: string, oneGroupPerCard: boolean, actor: Actor): Promise<GroupType> {
    const { organizationId } = await this.workspace.requireProject(projectId, actor, 'write');
    if (await this.types.findByName(projectId, name)) throw new DuplicateGroupTypeNameError(name);
    const id = await this.types.reserveId();
    const attributeId = await this.fields.createGroupTypeField({ projectId, groupTypeId: id, name });
    return this.unique(name, () =>
      this.types.insert({ id, projectId, organizationId, name, oneGroupPerCard, attributeId, createdBy: actor.userId }),
    );
  }

  /** PUT /group-types/{id}: rename (the field follows) and/or switch one_group_per_card. */
  async update(typeId: number, input: UpdateGroupTypeInput, actor: Actor): Promise<GroupTypeView> {
    if (input.name === undefined && input.one_group_per_card === undefined) {
      throw new InvalidGroupingInputError('name', 'give a name and/or one_group_per_card');
    }
    const name = input.name === undefined ? undefined : readName(input.name, 'name');
    const oneGroupPerCard = readFlag(input.one_group_per_card);
    return this.uow.run(async () => {
      await this.access.groupType(typeId, actor, 'write');
      const type = await this.types.lock(typeId, 'update');
      if (!type) throw new GroupTypeNotFoundError();
      if (name !== undefined && name !== type.name) {
        const other = await this.types.findByName(type.projectId, name);
        if (other && other.id !== type.id) throw new DuplicateGroupTypeNameError(name);
        await this.fields.renameGroupTypeField(type.id, name);
        await this.unique(name, () => this.types.update(type.id, { name }));
      }
      if (oneGroupPerCard === true && !type.oneGroupPerCard) {
        // Membership changes hold the type row FOR SHARE, so none is under way while we check.
        if (await this.types.hasCardInSeveralGroups(type.id)) throw new SeveralGroupsPerCardError();
      }
      if (oneGroupPerCard !== undefined) await this.types.update(type.id, { oneGroupPerCard });
      return toGroupTypeView((await this.types.find(type.id))!);
    });
  }

  /**
   * DELETE /group-types/{id}: its groups, their memberships and its field go;
   * cards stay, and each membership removed is written to its card's stream.
   */
  delete(typeId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      await this.access.groupType(typeId, actor, 'write');
      const members = await this.groupsService.lockMembers(() => this.memberships.ofType(typeId), async () => {
        const type = await this.types.lock(typeId, 'update');
        if (!type) throw new GroupTypeNotFoundError();
        return { type, groups: await this.groups.lockMany(await this.groups.idsOfType(type.id)) };
      });
      const { type, groups } = members.locked;
      const titles = new Map(groups.map((g) => [g.id, g.title]));
      await this.membershipsService.publishRemovals(members.rows, type, titles, actor, 'group_type_deleted');
      await this.fields.deleteGroupTypeField(type.id);
      await this.types.delete(type.id);
      await this.groupsService.touchAll(members.rows.map((m) => m.cardId));
    });
  }

  private async unique<T>(name: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (sqlState(error) === '23505') throw new DuplicateGroupTypeNameError(name);
      throw error;
    }
  }
}
