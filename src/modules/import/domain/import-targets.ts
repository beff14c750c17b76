import { findByName } from '../../../shared/domain/fold-case.js';
import { invalidImportInput } from './import.errors.js';
import type { ImportMapping } from './import-mapping.js';
import type { TargetContext, TargetField } from './row-checker.js';

/** What the target project already has, as the import needs to know it. */
export interface ProjectState {
  fields: Array<{ id: number; name: string; type: string; options: TargetField['options']; modelId: number | null; groupTypeId: number | null }>;
  groupTypes: Array<{ id: number; name: string; oneGroupPerCard: boolean }>;
  models: Array<{ id: number; name: string }>;
}

/** An attribute column's field: found (`attributeId`) or to be created (null). */
export interface FieldTarget extends TargetField {
  attributeId: number | null;
}

export interface ImportTargets {
  fields: Map<number, FieldTarget>;
  contexts: Map<number, TargetContext>;
}

/**
 * Matches the mapping's attributes and contexts with the project's fields and
 * group types (names compare in any case, as `foldCase` folds them, the exact
 * name first): an existing one must have the mapped type (DESIGN.md §8: 400
 * otherwise, naming the mapping key); missing ones are to be created. Model
 * fields are not filled by imports.
 */
export function resolveTargets(mapping: ImportMapping, state: ProjectState): ImportTargets {
  const targets: ImportTargets = { fields: new Map(), contexts: new Map() };
  for (const { column, spec } of mapping.columns) {
    if (spec.type !== 'attribute' && spec.type !== 'context') continue;
    const at = `mapping.${column}`;
    const field = findByName(state.fields, spec.name, (f) => f.name);
    if (field?.modelId !== null && field !== undefined) {
      throw invalidImportInput(`${at}.name`, `"${field.name}" is a field of a model; an import fills project fields only`);
    }
    if (spec.type === 'context') {
      if (field && field.groupTypeId === null) throw invalidImportInput(`${at}.name`, `"${field.name}" exists as a ${field.type} field, not a context`);
      const type = findByName(state.groupTypes, spec.name, (t) => t.name);
      // A type the import creates allows several groups per card (DESIGN.md §8).
      targets.contexts.set(column, { name: type?.name ?? spec.name, groupTypeId: type?.id ?? null, oneGroupPerCard: type?.oneGroupPerCard ?? false });
      continue;
    }
    if (field && field.groupTypeId !== null) {
      throw invalidImportInput(`${at}.attr_type`, `"${field.name}" is a context (a group_type field); map it as a context`);
    }
    if (field && field.type !== spec.attrType) {
      throw invalidImportInput(`${at}.attr_type`, `"${field.name}" exists with type ${field.type}, not ${spec.attrType}`);
    }
    targets.fields.set(column, {
      name: field?.name ?? spec.name,
      type: spec.attrType,
      options: field?.options ?? {},
      attributeId: field?.id ?? null,
    });
  }
  return targets;
}
