import { Injectable } from '@nestjs/common';
import { jsonColumn, Sql, toId, toIdOrNull } from '../../../shared/persistence/sql.js';
import type { FieldDefinition, ModelDefinition } from '../domain/field-definition.js';
import type { FieldOptions, FieldType } from '../domain/values/index.js';

interface RawField {
  id: number | string;
  project_id: number | string;
  model_id: number | string | null;
  name: string;
  type: FieldType;
  options: FieldOptions | string | null;
  group_type_id: number | string | null;
}

interface RawModel {
  id: number | string;
  project_id: number | string;
  name: string;
}

const FIELD_COLUMNS = 'id, project_id, model_id, name, type, options, group_type_id';


/**
 * SQL of a project's field definitions as one JSON array (id order), for
 * another module's statement to read along (`FieldsApi.projectFieldsSql`);
 * `fieldsFromJson` decodes what it returns.
 */
export function projectFieldsJsonSql(projectIdSql: string): string {
  return `(SELECT coalesce(jsonb_agg(to_jsonb(a) ORDER BY a.id), '[]'::jsonb)
             FROM (SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE project_id = ${projectIdSql}) a)`;
}

/**
 * SQL of a stamp of a project's field definitions that changes whenever one
 * of them is added, changed or removed: a digest of each row's id and row
 * version (`xmin`, new at every update). Read along with the definitions,
 * then compared in a later statement, it tells whether they still hold.
 */
export function definitionsStampSql(projectIdSql: string): string {
  return `(SELECT md5(coalesce(string_agg(a.id::text || '.' || a.xmin::text, ',' ORDER BY a.id), ''))
             FROM fields.attributes a WHERE a.project_id = ${projectIdSql})`;
}

/**
 * SQL that holds when the fields whose ids are the array `idsSql` are still
 * the versions the statement's snapshot reads: it takes FOR SHARE on their
 * rows (ascending id) and compares each locked row's version with the
 * snapshot's. A locking read waits for a transaction changing or deleting
 * the row and then reads the version it committed (or none), which a
 * snapshot taken before that commit cannot see: so a guarded write planned
 * on a field's options stops when they changed under it, and an option
 * change that comes after it waits for it to end (updateField).
 */
export function definitionsHeldSql(idsSql: string): string {
  const versions = (from: string) => `(SELECT string_agg(v.id::text || '.' || v.xmin::text, ',' ORDER BY v.id) FROM ${from} v)`;
  return `${versions(`(SELECT id, xmin FROM fields.attributes WHERE id = ANY(${idsSql}) ORDER BY id FOR SHARE)`)}
            IS NOT DISTINCT FROM ${versions(`(SELECT id, xmin FROM fields.attributes WHERE id = ANY(${idsSql}))`)}`;
}

/** The definitions `projectFieldsJsonSql` read (jsonb arrives parsed with pg, as text with PGlite). */
export function fieldsFromJson(value: unknown): FieldDefinition[] {
  const rows = jsonColumn<RawField[] | null>(value);
  return (rows ?? []).map(toField);
}

/** Whether what `projectFieldsJsonSql` read holds a group_type field, read from the rows as they are. */
export function hasGroupTypeFieldJson(value: unknown): boolean {
  return (jsonColumn<RawField[] | null>(value) ?? []).some((r) => r.type === 'group_type' && r.group_type_id !== null);
}

function toField(r: RawField): FieldDefinition {
  const options = jsonColumn<FieldOptions | null>(r.options) ?? {};
  return {
    id: toId(r.id),
    projectId: toId(r.project_id),
    modelId: toIdOrNull(r.model_id),
    name: r.name,
    type: r.type,
    options,
    groupTypeId: toIdOrNull(r.group_type_id),
  };
}

function toModel(r: RawModel): ModelDefinition {
  return { id: toId(r.id), projectId: toId(r.project_id), name: r.name };
}

export interface NewField {
  projectId: number;
  modelId: number | null;
  name: string;
  type: FieldType;
  options: FieldOptions;
  groupTypeId: number | null;
}

/** Field and model definitions (schema `fields`). */
@Injectable()
export class FieldDefinitionsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Serialises name changes within a project for the rest of the transaction:
   * uniqueness across project and model fields spans rows no index covers.
   */
  async lockProjectNames(projectId: number): Promise<void> {
    await this.sql.run(`SELECT pg_advisory_xact_lock(hashtextextended('fields.names:' || $1::text, 0))`, [projectId]);
  }

  /**
   * FOR KEY SHARE on the fields, in ascending id, until the transaction ends:
   * a deletion waits for it. Returns the ids that still exist.
   */
  async keyShare(ids: number[]): Promise<number[]> {
    const rows = await this.sql.rows<{ id: string }>(
      `SELECT id FROM fields.attributes WHERE id = ANY($1::bigint[]) ORDER BY id FOR KEY SHARE`,
      [ids],
    );
    return rows.map((r) => Number(r.id));
  }

  /**
   * FOR SHARE on the fields, in ascending id, until the transaction ends: a
   * change of their options (or a deletion) waits for it. Returns them as
   * they are now, the version a change that committed while this waited left.
   */
  async shareLock(ids: number[]): Promise<FieldDefinition[]> {
    const rows = await this.sql.rows<RawField>(
      `SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE id = ANY($1::bigint[]) ORDER BY id FOR SHARE`,
      [ids],
    );
    return rows.map(toField);
  }

  /**
   * FOR UPDATE on the field until the transaction ends: waits for every
   * value write holding it (FOR SHARE, or FOR KEY SHARE from a new value's
   * foreign key), so a read after it sees their values. False when it is gone.
   */
  async lockForChange(id: number): Promise<boolean> {
    return (await this.sql.rows(`SELECT id FROM fields.attributes WHERE id = $1 FOR UPDATE`, [id])).length > 0;
  }

  async find(id: number): Promise<FieldDefinition | null> {
    const rows = await this.sql.rows<RawField>(`SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE id = $1`, [id]);
    return rows[0] ? toField(rows[0]) : null;
  }

  async findByGroupType(groupTypeId: number): Promise<FieldDefinition | null> {
    const rows = await this.sql.rows<RawField>(`SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE group_type_id = $1`, [
      groupTypeId,
    ]);
    return rows[0] ? toField(rows[0]) : null;
  }

  /** group type id → its field's id. */
  async groupTypeFieldIds(groupTypeIds: number[]): Promise<Map<number, number>> {
    if (!groupTypeIds.length) return new Map();
    const rows = await this.sql.rows<{ id: number | string; group_type_id: number | string }>(
      `SELECT id, group_type_id FROM fields.attributes WHERE group_type_id = ANY($1::bigint[])`,
      [groupTypeIds],
    );
    return new Map(rows.map((r) => [toId(r.group_type_id), toId(r.id)]));
  }

  /** Project-wide fields (no model), id order. */
  async projectFields(projectId: number): Promise<FieldDefinition[]> {
    const rows = await this.sql.rows<RawField>(
      `SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE project_id = $1 AND model_id IS NULL ORDER BY id`,
      [projectId],
    );
    return rows.map(toField);
  }

  async modelFields(modelId: number): Promise<FieldDefinition[]> {
    const rows = await this.sql.rows<RawField>(`SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE model_id = $1 ORDER BY id`, [
      modelId,
    ]);
    return rows.map(toField);
  }

  /** Every field of the given projects, project and model fields alike, id order. */
  async fieldsOfProjects(projectIds: number[]): Promise<FieldDefinition[]> {
    if (!projectIds.length) return [];
    const rows = await this.sql.rows<RawField>(
      `SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE project_id = ANY($1::bigint[]) ORDER BY id`,
      [projectIds],
    );
    return rows.map(toField);
  }

  /** Fields of the project whose name equals `name` case-insensitively (project and model fields). */
  async sameNamed(projectId: number, name: string): Promise<FieldDefinition[]> {
    const rows = await this.sql.rows<RawField>(
      `SELECT ${FIELD_COLUMNS} FROM fields.attributes WHERE project_id = $1 AND lower(name) = lower($2) ORDER BY id`,
      [projectId, name],
    );
    return rows.map(toField);
  }

  async insert(f: NewField): Promise<FieldDefinition> {
    const [row] = await this.sql.rows<RawField>(
      `INSERT INTO fields.attributes (project_id, model_id, name, type, options, group_type_id)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING ${FIELD_COLUMNS}`,
      [f.projectId, f.modelId, f.name, f.type, JSON.stringify(f.options), f.groupTypeId],
    );
    return toField(row);
  }

  /** The field as changed, or null when it is gone (deleted by a request that committed first). */
  async update(id: number, changes: { name?: string; options?: FieldOptions }): Promise<FieldDefinition | null> {
    const rows = await this.sql.rows<RawField>(
      `UPDATE fields.attributes SET name = coalesce($2, name), options = coalesce($3::jsonb, options) WHERE id = $1 RETURNING ${FIELD_COLUMNS}`,
      [id, changes.name ?? null, changes.options === undefined ? null : JSON.stringify(changes.options)],
    );
    return rows[0] ? toField(rows[0]) : null;
  }

  /** Whether the field was there to delete (a concurrent deletion may have committed first). */
  async delete(id: number): Promise<boolean> {
    return (await this.sql.rows(`DELETE FROM fields.attributes WHERE id = $1 RETURNING id`, [id])).length > 0;
  }

  async deleteProject(projectId: number): Promise<void> {
    await this.sql.run(`DELETE FROM fields.attributes WHERE project_id = $1`, [projectId]);
    await this.sql.run(`DELETE FROM fields.models WHERE project_id = $1`, [projectId]);
  }

  async findModel(id: number): Promise<ModelDefinition | null> {
    const rows = await this.sql.rows<RawModel>(`SELECT id, project_id, name FROM fields.models WHERE id = $1`, [id]);
    return rows[0] ? toModel(rows[0]) : null;
  }

  async models(projectId: number): Promise<ModelDefinition[]> {
    const rows = await this.sql.rows<RawModel>(`SELECT id, project_id, name FROM fields.models WHERE project_id = $1 ORDER BY id`, [
      projectId,
    ]);
    return rows.map(toModel);
  }

  async insertModel(projectId: number, name: string, createdBy: number): Promise<ModelDefinition> {
    const [row] = await this.sql.rows<RawModel>(
      `INSERT INTO fields.models (project_id, name, created_by) VALUES ($1, $2, $3) RETURNING id, project_id, name`,
      [projectId, name, createdBy],
    );
    return toModel(row);
  }
}
