import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { FieldsApi } from '../../fields/index.js';
import { GroupingApi, type GroupTypeChanges, type GroupTypeInfo } from '../../grouping/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { GroupTypeView, GroupTypeWithField } from '../contracts/cards.api.js';

export const toGroupTypeView = (t: GroupTypeWithField): GroupTypeView => ({
  id: t.id,
  project_id: t.projectId,
  name: t.name,
  one_group_per_card: t.oneGroupPerCard,
  attribute_id: t.attributeId,
  created_at: t.createdAt.toISOString(),
});

/**
 * Group types with their `group_type` field: grouping owns the type, fields
 * owns the field and the link (`attributes.group_type_id`). Created, renamed
 * and deleted together, grouping first (docs/ARCHITECTURE.md, "The one lock
 * order": step 3, then 4).
 */
@Injectable()
export class GroupTypesWithFieldService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly workspace: WorkspaceApi,
    private readonly grouping: GroupingApi,
    private readonly fields: FieldsApi,
  ) {}

  async list(projectId: number, actor: Actor): Promise<GroupTypeView[]> {
    await this.workspace.requireProject(projectId, actor, 'read');
    return (await this.withFields(await this.grouping.groupTypes(projectId))).map(toGroupTypeView);
  }

  async get(typeId: number, actor: Actor): Promise<GroupTypeView> {
    const [type] = await this.withFields([await this.grouping.requireGroupType(typeId, actor, 'read')]);
    return toGroupTypeView(type);
  }

  async create(projectId: number, input: { name: unknown; one_group_per_card?: unknown }, actor: Actor): Promise<GroupTypeView> {
    return toGroupTypeView(await this.uow.run(() => this.createIn(projectId, input, actor)));
  }

  /** The project's type of that name (any case), or a new one; for imports. */
  ensure(projectId: number, name: string, oneGroupPerCard: boolean, actor: Actor): Promise<GroupTypeWithField> {
    return this.uow.run(async () => {
      await this.workspace.requireProject(projectId, actor, 'read');
      const found = await this.grouping.findGroupType(projectId, name);
      if (found) return (await this.withFields([found]))[0];
      return this.createIn(projectId, { name, one_group_per_card: oneGroupPerCard }, actor);
    });
  }

  async update(typeId: number, changes: GroupTypeChanges, actor: Actor): Promise<GroupTypeView> {
    const type = await this.uow.run(async () => {
      const { type: updated, previousName } = await this.grouping.updateGroupType(typeId, changes, actor);
      if (updated.name !== previousName) await this.fields.renameGroupTypeField(updated.id, updated.name);
      return updated;
    });
    return toGroupTypeView((await this.withFields([type]))[0]);
  }

  delete(typeId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      await this.grouping.deleteGroupType(typeId, actor);
      await this.fields.deleteGroupTypeField(typeId);
    });
  }

  private async createIn(projectId: number, input: { name: unknown; one_group_per_card?: unknown }, actor: Actor): Promise<GroupTypeWithField> {
    const type = await this.grouping.createGroupType(projectId, input, actor);
    const attributeId = await this.fields.createGroupTypeField({ projectId, groupTypeId: type.id, name: type.name });
    return { ...type, attributeId };
  }

  private async withFields(types: GroupTypeInfo[]): Promise<GroupTypeWithField[]> {
    const ids = await this.fields.groupTypeFieldIds(types.map((t) => t.id));
    return types.map((t) => ({ ...t, attributeId: ids.get(t.id)! }));
  }
}
