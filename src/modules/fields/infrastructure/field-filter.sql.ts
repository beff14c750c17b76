import { Injectable } from '@nestjs/common';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import { jsonColumn } from '../../../shared/persistence/sql.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { idIn, textMatchSql, type FilterCardColumns, type FilterOrderOp, type SqlParams } from '../../../shared/persistence/filter-sql.js';
import {
  FieldFilterApi,
  type FieldTerm,
  type FilterFieldRef,
  type FilterSchema,
} from '../contracts/field-filter.api.js';
import type { FieldOptions, FieldType } from '../domain/values/index.js';

type Raw = Record<string, unknown>;


/**
 * `column` (a field id) is one of `fields` as the card uses them: a project
 * field always, a model field only on a card of that model (a card keeps a
 * hidden model field's values, which the filter must not see).
 */
function fieldsOf(column: string, fields: FilterFieldRef[], card: FilterCardColumns, params: SqlParams): string {
  const projectFields = fields.filter((f) => f.modelId === null).map((f) => f.id);
  const modelFields = fields.filter((f) => f.modelId !== null);
  const parts: string[] = [];
  if (projectFields.length) parts.push(idIn(column, projectFields, params));
  if (modelFields.length) {
    parts.push(
      `(${column}, ${card.modelId}) IN (SELECT * FROM unnest(${params.add(
        modelFields.map((f) => f.id),
        'bigint[]',
      )}, ${params.add(
        modelFields.map((f) => f.modelId),
        'bigint[]',
      )}))`,
    );
  }
  return parts.length ? `(${parts.join(' OR ')})` : 'false';
}

/** Compares a period's days with `day`: covers it (=), ends before (<, <=), starts after (>, >=). */
function periodComparison(op: FilterOrderOp, day: string, params: SqlParams): string {
  const start = `left(v.value ->> 'start', 10) COLLATE "C"`;
  const end = `left(v.value ->> 'end', 10) COLLATE "C"`;
  const d = params.add(day, 'text');
  switch (op) {
    case '=':
      return `${start} <= ${d} AND ${end} >= ${d}`;
    case '<':
    case '<=':
      return `${end} ${op} ${d}`;
    case '>':
    case '>=':
      return `${start} ${op} ${d}`;
  }
}

/** The comparison of a scalar value `v.value` (jsonb) for a scalar term. */
function scalarComparison(term: Extract<FieldTerm, { fields: FilterFieldRef[]; kind: 'text' | 'number' | 'bool' | 'date' | 'period' | 'time' }>, params: SqlParams): string {
  const asText = `(v.value #>> '{}')`;
  switch (term.kind) {
    case 'text':
      return `jsonb_typeof(v.value) = 'string' AND ${textMatchSql(asText, term.match, term.text, params)}`;
    case 'number':
      // jsonb orders numbers numerically; the type test keeps other kinds of value out.
      return `jsonb_typeof(v.value) = 'number' AND v.value ${term.op} ${params.add(JSON.stringify(term.value), 'jsonb')}`;
    case 'bool':
      return `v.value = ${params.add(JSON.stringify(term.value), 'jsonb')}`;
    case 'date':
      // The day of a string value, NULL for any other kind: the expression of
      // scalar_values_string_day_idx, whose statistics estimate the range.
      return `(CASE WHEN jsonb_typeof(v.value) = 'string' THEN left(${asText}, 10) END) COLLATE "C" ${term.op} ${params.add(term.day, 'text')}`;
    case 'period':
      return `jsonb_typeof(v.value) = 'object' AND ${periodComparison(term.op, term.day, params)}`;
    case 'time':
      return `jsonb_typeof(v.value) = 'string' AND ${asText} COLLATE "C" ${term.op} ${params.add(term.time, 'text')}`;
  }
}

/** The value rows a term tests (every kind but a likes score): their table, its alias, and the test of one row. */
function valueRows(term: Exclude<FieldTerm, { kind: 'likes' }>, params: SqlParams): { table: string; alias: string; test: string } {
  switch (term.kind) {
    case 'text':
    case 'number':
    case 'bool':
    case 'date':
    case 'period':
    case 'time':
      return { table: 'fields.scalar_values', alias: 'v', test: scalarComparison(term, params) };
    case 'member':
      return { table: 'fields.member_values', alias: 'm', test: idIn('m.user_id', term.userIds, params) };
    case 'relationship':
      return { table: 'fields.relationship_values', alias: 'r', test: `r.target_card_id IN (${term.targets})` };
    case 'liked':
      return { table: 'fields.like_votes', alias: 'l', test: `${idIn('l.user_id', term.userIds, params)} AND l.vote = 1` };
    case 'file':
      return { table: 'fields.files', alias: 'f', test: textMatchSql('f.name', term.match, term.text, params) };
  }
}

/**
 * The definitions a filter's names are looked up in: a fixed text, named
 * (its plan does not depend on the projects: two index scans by project).
 */
const SCHEMA_SQL = prepared(
  `SELECT 'field' AS what, id, project_id, model_id, name, type, options, group_type_id
     FROM fields.attributes WHERE project_id = ANY($1::bigint[])
   UNION ALL
   SELECT 'model', id, project_id, NULL, name, NULL, NULL, NULL
     FROM fields.models WHERE project_id = ANY($1::bigint[])`,
);

/**
 * The fields part of the filter language: each term is an EXISTS over the
 * fields module's own value tables, correlated on the card's id (and model).
 */
@Injectable()
export class FieldFilterSql extends FieldFilterApi {
  constructor(private readonly uow: UnitOfWork) {
    super();
  }

  async schema(projectIds: number[]): Promise<FilterSchema> {
    if (!projectIds.length) return { fields: [], models: [] };
    const rows = (await this.uow.manager.query(SCHEMA_SQL, [projectIds])) as Raw[];
    const id = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    const schema: FilterSchema = { fields: [], models: [] };
    for (const r of rows) {
      if (r.what === 'model') {
        schema.models.push({ id: Number(r.id), projectId: Number(r.project_id), name: String(r.name) });
        continue;
      }
      const options = jsonColumn<FieldOptions | null>(r.options) ?? {};
      schema.fields.push({
        id: Number(r.id),
        projectId: Number(r.project_id),
        modelId: id(r.model_id),
        name: String(r.name),
        type: r.type as FieldType,
        options: { time: options.time === true, period: options.period === true },
        groupTypeId: id(r.group_type_id),
      });
    }
    return schema;
  }

  predicate(term: FieldTerm, card: FilterCardColumns, params: SqlParams): string {
    if (term.kind === 'likes') {
      // A likes field always has a score (0 without votes), so the test runs
      // over the fields the card uses, not over its vote rows.
      return `EXISTS (SELECT 1 FROM fields.attributes l
                       WHERE l.project_id = ${card.projectId} AND ${fieldsOf('l.id', term.fields, card, params)}
                         AND coalesce((SELECT sum(lv.vote) FROM fields.like_votes lv
                                        WHERE lv.card_id = ${card.id} AND lv.attribute_id = l.id), 0)
                             ${term.op} ${params.add(term.value, 'numeric')})`;
    }
    const { table, alias, test } = valueRows(term, params);
    return `EXISTS (SELECT 1 FROM ${table} ${alias}
                     WHERE ${alias}.card_id = ${card.id} AND ${fieldsOf(`${alias}.attribute_id`, term.fields, card, params)}
                       AND ${test})`;
  }

  cardIds(term: FieldTerm, params: SqlParams): string | null {
    // A model's field counts only on cards of its model, a likes score exists
    // without value rows, and a relationship's target is found in the card's
    // own project: those depend on the card row.
    if (term.kind === 'likes' || term.kind === 'relationship' || term.fields.some((f) => f.modelId !== null)) return null;
    const { table, alias, test } = valueRows(term, params);
    return `SELECT ${alias}.card_id FROM ${table} ${alias}
             WHERE ${idIn(`${alias}.attribute_id`, term.fields.map((f) => f.id), params)} AND ${test}`;
  }
}
