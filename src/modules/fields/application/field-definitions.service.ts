import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { NotFoundError } from '../../../shared/domain/domain-error.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { WorkspaceApi, type AccessMode, type ProjectAccess } from '../../workspace/index.js';
import {
  sameName,
  toAttributeView,
  toModelView,
  validFieldName,
  validName,
  type AttributeView,
  type FieldDefinition,
  type ModelDefinition,
  type ModelView,
} from '../domain/field-definition.js';
import {
  FieldHasValuesError,
  FieldNameTakenError,
  FieldNotFoundError,
  GroupTypeFieldError,
  InvalidFieldInputError,
  ModelNameTakenError,
  ModelNotFoundError,
} from '../domain/fields.errors.js';
import {
  fieldTypeCatalogue,
  isFieldType,
  validateFieldOptions,
  type FieldOptions,
  type FieldType,
  type FieldTypeInfo,
} from '../domain/values/index.js';
import { mapViolations } from '../../../shared/persistence/sql-errors.js';
import { FieldDefinitionsRepository } from '../infrastructure/field-definitions.repository.js';
import { FieldValuesRepository } from '../infrastructure/field-values.repository.js';
import { FileBlobs } from '../files/application/file-blobs.service.js';

export interface FieldInput {
  name?: unknown;
  type?: unknown;
  options?: unknown;
}

/** Field and model definitions: GET/POST /projects/{id}/attributes, /attributes/{id}, models. */
@Injectable()
export class FieldDefinitionsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly repo: FieldDefinitionsRepository,
    private readonly values: FieldValuesRepository,
    private readonly blobs: FileBlobs,
    private readonly workspace: WorkspaceApi,
  ) {}

  attributeTypes(): FieldTypeInfo[] {
    return fieldTypeCatalogue();
  }

  async listProjectFields(projectId: number, actor: Actor): Promise<AttributeView[]> {
    await this.workspace.requireProject(projectId, actor, 'read');
    return (await this.repo.projectFields(projectId)).map(toAttributeView);
  }

  createProjectField(projectId: number, input: FieldInput, actor: Actor): Promise<AttributeView> {
    return this.uow.run(async () => {
      await this.workspace.requireProject(projectId, actor, 'write');
      return toAttributeView(await this.createField(projectId, null, input));
    });
  }

  /** A project field made by an import, in the import's transaction (it checked access). */
  createImportedField(projectId: number, input: FieldInput): Promise<FieldDefinition> {
    return this.uow.run(() => this.createField(projectId, null, input));
  }

  async listModels(projectId: number, actor: Actor): Promise<ModelView[]> {
    await this.workspace.requireProject(projectId, actor, 'read');
    return (await this.repo.models(projectId)).map(toModelView);
  }

  createModel(projectId: number, input: { name?: unknown }, actor: Actor): Promise<ModelView> {
    const name = validName(input.name);
    return this.uow.run(async () => {
      await this.workspace.requireProject(projectId, actor, 'write');
      await this.repo.lockProjectNames(projectId);
      if ((await this.repo.models(projectId)).some((m) => sameName(m.name, name))) throw new ModelNameTakenError(name);
      return toModelView(await mapViolations(() => this.repo.insertModel(projectId, name, actor.userId), { unique: () => new ModelNameTakenError(name) }));
    });
  }

  async getModel(modelId: number, actor: Actor): Promise<ModelView> {
    return toModelView(await this.requireModel(modelId, actor, 'read'));
  }

  async listModelFields(modelId: number, actor: Actor): Promise<AttributeView[]> {
    await this.requireModel(modelId, actor, 'read');
    return (await this.repo.modelFields(modelId)).map(toAttributeView);
  }

  createModelField(modelId: number, input: FieldInput, actor: Actor): Promise<AttributeView> {
    return this.uow.run(async () => {
      const model = await this.requireModel(modelId, actor, 'write');
      return toAttributeView(await this.createField(model.projectId, model.id, input));
    });
  }

  async getField(fieldId: number, actor: Actor): Promise<AttributeView> {
    return toAttributeView(await this.requireField(fieldId, actor, 'read'));
  }

  /** Renames and changes options; the type of a field never changes. */
  updateField(fieldId: number, input: FieldInput, actor: Actor): Promise<AttributeView> {
    return this.uow.run(async () => {
      const field = await this.requireField(fieldId, actor, 'write');
      if (field.type === 'group_type') throw new GroupTypeFieldError('name', field.name, 'its definition');
      if (input.type !== undefined && input.type !== field.type) {
        throw new InvalidFieldInputError('type', 'the type of a field cannot be changed; create a new field');
      }
      if (input.name === undefined && input.options === undefined) {
        throw new InvalidFieldInputError('name', 'give a name and/or options');
      }
      const name = input.name === undefined ? undefined : validFieldName(input.name);
      const options = input.options === undefined ? undefined : validateFieldOptions(field.type, input.options);
      await this.repo.lockProjectNames(field.projectId);
      if (name !== undefined) await this.assertNameFree(field.projectId, field.modelId, name, field.id);
      if (options !== undefined && this.narrowsValues(field.options, options)) {
        // A value write holds the field's row until it commits (CardValuesService: FOR SHARE on the
        // fields with options it writes, FOR KEY SHARE from a new value's key): wait for it, then
        // look. One that comes later waits for this change and checks its value against the new options.
        if (!(await this.repo.lockForChange(field.id))) throw new FieldNotFoundError();
        if (await this.values.hasValues(field)) throw new FieldHasValuesError(field.name, 'the time and period options');
      }
      const updated = await mapViolations(() => this.repo.update(field.id, { name, options }), { unique: () => new FieldNameTakenError(name ?? field.name) });
      // Deleted since it was read, by a request that committed first.
      if (!updated) throw new FieldNotFoundError();
      return toAttributeView(updated);
    });
  }

  /** Removes the field and all its values. */
  deleteField(fieldId: number, actor: Actor): Promise<void> {
    return this.uow.run(async () => {
      const field = await this.requireField(fieldId, actor, 'write');
      if (field.type === 'group_type') throw new GroupTypeFieldError('id', field.name, 'its definition');
      // Deleted since it was read, by a request that committed first: one 200, the others 404.
      if (!(await this.repo.delete(field.id))) throw new FieldNotFoundError();
      this.blobs.sweepAfterCommit();
    });
  }

  /** Inside the caller's transaction (grouping creates its group type in the same one). */
  async createGroupTypeField(projectId: number, groupTypeId: number, rawName: string): Promise<number> {
    const name = validFieldName(rawName);
    return this.uow.run(async () => {
      await this.repo.lockProjectNames(projectId);
      await this.assertNameFree(projectId, null, name);
      const field = await mapViolations(() => this.repo.insert({ projectId, modelId: null, name, type: 'group_type', options: {}, groupTypeId }), { unique: () => new FieldNameTakenError(name) });
        return field.id;
    });
  }

  renameGroupTypeField(groupTypeId: number, rawName: string): Promise<void> {
    const name = validFieldName(rawName);
    return this.uow.run(async () => {
      const field = await this.repo.findByGroupType(groupTypeId);
      if (!field) throw new FieldNotFoundError();
      await this.repo.lockProjectNames(field.projectId);
      await this.assertNameFree(field.projectId, null, name, field.id);
      await mapViolations(() => this.repo.update(field.id, { name }), { unique: () => new FieldNameTakenError(name) });
    });
  }

  deleteGroupTypeField(groupTypeId: number): Promise<void> {
    return this.uow.run(async () => {
      const field = await this.repo.findByGroupType(groupTypeId);
      if (field) await this.repo.delete(field.id);
    });
  }

  /** The field, if the caller may see its project; 404 otherwise (never reveals another team's ids). */
  async requireField(fieldId: number, actor: Actor, mode: AccessMode): Promise<FieldDefinition> {
    const field = await this.repo.find(fieldId);
    if (!field) throw new FieldNotFoundError();
    await this.requireProjectOr404(field.projectId, actor, mode, () => new FieldNotFoundError());
    return field;
  }

  async requireModel(modelId: number, actor: Actor, mode: AccessMode): Promise<ModelDefinition> {
    const model = await this.repo.findModel(modelId);
    if (!model) throw new ModelNotFoundError();
    await this.requireProjectOr404(model.projectId, actor, mode, () => new ModelNotFoundError());
    return model;
  }

  private async requireProjectOr404(
    projectId: number,
    actor: Actor,
    mode: AccessMode,
    notFound: () => Error,
  ): Promise<ProjectAccess> {
    try {
      return await this.workspace.requireProject(projectId, actor, mode);
    } catch (error) {
      if (error instanceof NotFoundError) throw notFound();
      throw error;
    }
  }

  private async createField(projectId: number, modelId: number | null, input: FieldInput): Promise<FieldDefinition> {
    const name = validFieldName(input.name);
    const type = this.validType(input.type);
    const options = validateFieldOptions(type, input.options);
    await this.repo.lockProjectNames(projectId);
    await this.assertNameFree(projectId, modelId, name);
    return mapViolations(() => this.repo.insert({ projectId, modelId, name, type, options, groupTypeId: null }), { unique: () => new FieldNameTakenError(name) });
  }

  private validType(type: unknown): FieldType {
    if (!isFieldType(type)) {
      const known = fieldTypeCatalogue()
        .map((t) => t.type)
        .join(', ');
      throw new InvalidFieldInputError('type', `must be one of ${known}`);
    }
    if (type === 'group_type') {
      throw new InvalidFieldInputError(
        'type',
        'group_type fields come with group types; create one with POST /projects/{id}/group-types',
      );
    }
    return type;
  }

  /**
   * A card of a model sees the project's fields and the model's, so a project
   * field's name must differ from every field of the project, and a model
   * field's from the project fields and its model's fields. Two models may
   * reuse a name: no card sees both.
   */
  private async assertNameFree(projectId: number, modelId: number | null, name: string, exceptId?: number): Promise<void> {
    const clash = (await this.repo.sameNamed(projectId, name)).find(
      (f) => f.id !== exceptId && (modelId === null || f.modelId === null || f.modelId === modelId),
    );
    if (clash) throw new FieldNameTakenError(name);
  }

  /** Values already stored stay valid when options only widen what is accepted. */
  private narrowsValues(before: FieldOptions, after: FieldOptions): boolean {
    return Boolean(before.period) !== Boolean(after.period) || (Boolean(before.time) && !after.time);
  }
}
