import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { CardSummary } from '../../card-hierarchy/index.js';
import {
  FieldsApi,
  type BulkValueOptions,
  type CardAttributes,
  type FieldCardRef,
  type FieldChoices,
  type FieldInfo,
  type GroupTypeFieldSpec,
  type ModelInfo,
  type NewValuesAlong,
  type ParsedFieldValue,
  type PlannedValues,
  type PreparedValues,
  type ProjectFields,
  type UploadedFile,
  type ValueSetRequest,
} from '../contracts/fields.api.js';
import { InvalidInputError } from '../../../shared/domain/domain-error.js';
import { validFieldName, type FieldDefinition } from '../domain/field-definition.js';
import { InvalidFieldInputError } from '../domain/fields.errors.js';
import { fieldTypeHandler, isFieldType, memberKey, parseMemberRef, parseValue, type FieldOptions, type MemberRef, type ValueStorage } from '../domain/values/index.js';
import { FieldDefinitionsRepository, fieldsFromJson, hasGroupTypeFieldJson, projectFieldsJsonSql } from '../infrastructure/field-definitions.repository.js';
import { cardValuesJsonSql, FieldValuesRepository, valuesFromJson } from '../infrastructure/field-values.repository.js';
import { AttributeValuesReader } from './attribute-values.reader.js';
import { CardModelService } from './card-model.service.js';
import { CardValuesService, ProjectFieldSet } from './card-values.service.js';
import { DeletedTargetsService } from './deleted-targets.service.js';
import { FieldChoicesService } from './field-choices.service.js';
import { FieldDefinitionsService } from './field-definitions.service.js';
import { TeamReferences } from './team-references.js';

function toFieldInfo(f: FieldDefinition): FieldInfo {
  return { id: f.id, name: f.name, type: f.type, options: f.options, modelId: f.modelId, groupTypeId: f.groupTypeId };
}

@Injectable()
export class FieldsApiImpl extends FieldsApi {
  constructor(
    private readonly definitions: FieldDefinitionsService,
    private readonly definitionRows: FieldDefinitionsRepository,
    private readonly reader: AttributeValuesReader,
    private readonly values: CardValuesService,
    private readonly models: CardModelService,
    private readonly fieldChoices: FieldChoicesService,
    private readonly valueRows: FieldValuesRepository,
    private readonly references: TeamReferences,
    private readonly deletedTargets: DeletedTargetsService,
  ) {
    super();
  }

  attributesOf(cards: FieldCardRef[], projectFields?: unknown, values?: unknown): Promise<CardAttributes> {
    return this.reader.attributesOf(
      cards,
      projectFields === undefined ? undefined : fieldsFromJson(projectFields),
      values === undefined ? undefined : valuesFromJson(values),
    );
  }

  cardValuesSql(cardIdsSql: string, projectIdSql?: string): string {
    return cardValuesJsonSql(cardIdsSql, projectIdSql);
  }

  projectFieldsSql(projectIdSql: string): string {
    return projectFieldsJsonSql(projectIdSql);
  }

  hasGroupTypeFields(projectFields: unknown): boolean {
    return hasGroupTypeFieldJson(projectFields);
  }

  blankAttributes(card: FieldCardRef, projectFields: unknown): Record<string, unknown> {
    return this.reader.blankAttributes(card, fieldsFromJson(projectFields));
  }

  prepareValues(
    projectId: number,
    entries: Array<{ attributes: unknown; property: string }>,
    actor: Actor | undefined,
    projectFields?: unknown,
  ): Promise<PreparedValues[]> {
    return this.values.prepare(projectId, entries, actor, knownFields(projectId, projectFields));
  }

  async projectFields(projectId: number): Promise<ProjectFields> {
    return new ProjectFieldSet(projectId, await this.definitionRows.fieldsOfProjects([projectId]));
  }

  newValuesAlong(items: PreparedValues[], actor: Actor, options?: BulkValueOptions): NewValuesAlong | undefined {
    return this.values.newAlong(items, actor, options);
  }

  writeValues(card: CardSummary, prepared: PreparedValues, actor: Actor, options?: { system?: boolean }): Promise<void> {
    return this.values.write(card, prepared, actor, options);
  }

  writeNewValues(items: Array<{ card: CardSummary; prepared: PreparedValues }>, actor: Actor, options?: BulkValueOptions): Promise<void> {
    return this.values.writeNew(items, actor, options);
  }
  writeValuesMany(items: Array<{ card: CardSummary; prepared: PreparedValues }>, actor: Actor, options?: BulkValueOptions): Promise<Set<number>> {
    return this.values.writeMany(items, actor, options);
  }

  setValue(cardId: number, key: string, body: unknown, upload: UploadedFile | undefined, actor: Actor): Promise<void> {
    return this.values.setOne(cardId, key, body, upload, actor);
  }

  planValues(cardId: number, request: ValueSetRequest, actor: Actor, options?: { fresh?: boolean }): Promise<PlannedValues> {
    return this.values.plan(cardId, request, actor, options);
  }

  appendValue(cardId: number, key: string, body: unknown, upload: UploadedFile | undefined, actor: Actor): Promise<void> {
    return this.values.append(cardId, key, body, upload, actor);
  }

  popValue(cardId: number, key: string, body: unknown, actor: Actor): Promise<void> {
    return this.values.pop(cardId, key, body, actor);
  }

  setModel(cardId: number, body: unknown, actor: Actor, options?: { system?: boolean }): Promise<void> {
    return this.models.setModel(cardId, body, actor, options);
  }

  setModels(entries: Array<{ cardId: number; modelId: number | null }>, actor: Actor, options?: { system?: boolean }): Promise<void> {
    return this.models.setModels(entries, actor, options);
  }

  choices(card: CardSummary, key: string): Promise<FieldChoices> {
    return this.fieldChoices.choices(card, key);
  }

  async fieldsOf(projectId: number): Promise<FieldInfo[]> {
    return (await this.definitionRows.fieldsOfProjects([projectId])).map(toFieldInfo);
  }

  async modelsOf(projectId: number): Promise<ModelInfo[]> {
    return (await this.definitionRows.models(projectId)).map(({ id, name }) => ({ id, name }));
  }

  parseValue(field: { name: string; type: string; options: FieldOptions }, input: unknown): ParsedFieldValue {
    if (!isFieldType(field.type) || !CHECKABLE[fieldTypeHandler(field.type).storage]) return { ok: false, message: `${field.name}: ${field.type} values cannot be given as text` };
    try {
      const value = parseValue({ name: field.name, type: field.type, options: field.options }, input);
      // Members as the entries they were given in: MemberRef stays inside this module.
      return { ok: true, value: field.type === 'members' && value !== null ? (value as MemberRef[]).map(memberEntry) : value };
    } catch (error) {
      if (error instanceof InvalidInputError) return { ok: false, message: error.message };
      throw error;
    }
  }

  async memberProblems(organizationId: number, refs: Array<number | string>): Promise<Array<string | undefined>> {
    const parsed = refs.map((ref) => {
      try {
        return parseMemberRef('', ref);
      } catch {
        return undefined;
      }
    });
    const resolved = await this.references.members(organizationId, parsed.filter((r): r is MemberRef => r !== undefined));
    return parsed.map((ref) => {
      if (ref === undefined) return 'expected a user id or @username';
      const found = resolved.get(memberKey(ref))!;
      return found.ok ? undefined : found.message;
    });
  }

  fieldNameProblem(name: string): string | undefined {
    try {
      validFieldName(name);
      return undefined;
    } catch (error) {
      if (error instanceof InvalidFieldInputError) return error.errors?.[0]?.message ?? error.message;
      throw error;
    }
  }

  async createField(projectId: number, input: { name: string; type: string; options?: unknown }): Promise<FieldInfo> {
    return toFieldInfo(await this.definitions.createImportedField(projectId, input));
  }

  async holdFields(ids: number[]): Promise<number[]> {
    if (!ids.length) return [];
    const held = new Set(await this.definitionRows.keyShare(ids));
    return ids.filter((id) => !held.has(id));
  }

  cardsWithValues(attributeId: number, values: unknown[]): Promise<Array<{ cardId: number; value: unknown }>> {
    return this.valueRows.cardsWithScalarValues(attributeId, values);
  }

  cardsNaming(cardIds: number[]): Promise<number[]> {
    return this.deletedTargets.cardsNaming(cardIds);
  }

  removeValuesNaming(cardIds: number[], actor: Actor): Promise<number[]> {
    return this.deletedTargets.remove(cardIds, actor);
  }

  groupTypeFieldIds(groupTypeIds: number[]): Promise<Map<number, number>> {
    return this.definitionRows.groupTypeFieldIds(groupTypeIds);
  }

  createGroupTypeField(spec: GroupTypeFieldSpec): Promise<number> {
    return this.definitions.createGroupTypeField(spec.projectId, spec.groupTypeId, spec.name);
  }

  renameGroupTypeField(groupTypeId: number, name: string): Promise<void> {
    return this.definitions.renameGroupTypeField(groupTypeId, name);
  }

  deleteGroupTypeField(groupTypeId: number): Promise<void> {
    return this.definitions.deleteGroupTypeField(groupTypeId);
  }
}

/** The kinds of values `parseValue` checks: all but files (fetched, not parsed) and group_type fields (grouping's); a new kind must say. */
const CHECKABLE: Record<ValueStorage, boolean> = { scalar: true, likes: true, members: true, relationships: true, files: false, groups: false };

function memberEntry(ref: MemberRef): number | string {
  return ref.kind === 'user_id' ? ref.id : `@${ref.username}`;
}

/** The definitions a caller already holds: a `ProjectFields`, or what `projectFieldsSql` read; undefined reads them. */
function knownFields(projectId: number, projectFields: unknown): FieldDefinition[] | undefined {
  if (projectFields instanceof ProjectFieldSet) return projectFields.of(projectId);
  return projectFields === undefined ? undefined : fieldsFromJson(projectFields);
}
