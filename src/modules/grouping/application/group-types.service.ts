import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { mapViolations } from '../../../shared/persistence/sql-errors.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { GroupTypeChanges } from '../contracts/grouping.api.js';
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
import { GroupsService } from './groups.service.js';
import { MembershipsService } from './memberships.service.js';

function readFlag(value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new InvalidGroupingInputError('one_group_per_card', 'must be a boolean');
  return value;
}

/**
 * Group types of a project. Each has a `group_type` field, which the fields
 * module owns; `cards` creates, renames and deletes it in the same transaction.
 */
@Injectable()
export class GroupTypesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly workspace: WorkspaceApi,
    private readonly hierarchy: CardHierarchyApi,
    private readonly access: GroupingAccess,
    private readonly types: GroupTypesRepository,
    private readonly groups: GroupsRepository,
    private readonly memberships: MembershipsRepository,
    private readonly groupsService: GroupsService,
    private readonly membershipsService: MembershipsService,
  ) {}

  async list(projectId: number, actor: Actor): Promise<GroupType[]> {
    await this.workspace.requireProject(projectId, actor, 'read');
    return this.types.ofProject(projectId);
  }

  create(projectId: number, input: { name: unknown; one_group_per_card?: unknown }, actor: Actor): Promise<GroupType> {
    const name = readName(input.name, 'name');
    const oneGroupPerCard = readFlag(input.one_group_per_card) ?? false;
    return this.uow.run(async () => {
      const { organizationId } = await this.workspace.requireProject(projectId, actor, 'write');
      if (await this.types.findByName(projectId, name)) throw new DuplicateGroupTypeNameError(name);
      return this.unique(name, () =>
        this.types.insert({ projectId, organizationId, name, oneGroupPerCard, createdBy: actor.userId }),
      );
    });
  }

  /** PUT /group-types/{id}: rename and/or switch one_group_per_card. */
  update(typeId: number, input: GroupTypeChanges, actor: Actor): Promise<{ type: GroupType; previousName: string }> {
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
        await this.unique(name, () => this.types.update(type.id, { name }));
      }
      if (oneGroupPerCard === true && !type.oneGroupPerCard) {
        // Membership changes hold the type row FOR SHARE, so none is under way while we check.
        if (await this.types.hasCardInSeveralGroups(type.id)) throw new SeveralGroupsPerCardError();
      }
      if (oneGroupPerCard !== undefined) await this.types.update(type.id, { oneGroupPerCard });
      return { type: (await this.types.find(type.id))!, previousName: type.name };
    });
  }

  /**
   * DELETE /group-types/{id}: its groups and their memberships go; cards stay,
   * and each membership removed is written to its card's stream.
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
      await this.types.delete(type.id);
      await this.hierarchy.touchMany(members.rows.map((m) => m.cardId));
    });
  }

  private unique<T>(name: string, work: () => Promise<T>): Promise<T> {
    return mapViolations(work, { unique: () => new DuplicateGroupTypeNameError(name) });
  }
}
