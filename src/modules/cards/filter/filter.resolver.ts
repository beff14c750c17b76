import type { FilterField, FilterFieldRef, FilterSchema } from '../../fields/index.js';
import type { FilterOrderOp } from '../../../shared/persistence/filter-sql.js';
import { sameNamed } from '../../../shared/domain/fold-case.js';
import { appendTo } from '../../../shared/domain/lists-by-key.js';
import type { BuiltinField, CompareOp, FieldName, FilterExpr, FilterValue, UserRef } from './filter.ast.js';
import type { Condition } from './filter.condition.js';
import { FilterError } from './filter.errors.js';
import { boolValue, dayValue, numberValue, stateValue, timeSpanValue, timeValue, wholeValue } from './filter-values.js';

/** What a filter's names and values are resolved against. */
export interface ResolveContext {
  schema: FilterSchema;
  /** The caller (`@me`). */
  meId: number;
  /** Today's UTC day `YYYY-MM-DD` (`today`, `-7d`). */
  today: string;
  /** Ids of the users each `@name` / `@{name}` names (see `userKey`); absent: nobody. */
  users: Map<string, number[]>;
}

/** `=` or `in` on a field, with `!=` already turned into `not =`. */
type Op = Exclude<CompareOp, '!='> | 'in';

/** How a field's values compare: a field type, with `date` split by its period option. */
type FieldKind =
  | 'text'
  | 'number'
  | 'bool'
  | 'date'
  | 'period'
  | 'time'
  | 'members'
  | 'relationships'
  | 'likes'
  | 'files'
  | 'group_type';

const ORDER_OPS = new Set<Op>(['=', '<', '<=', '>', '>=']);
const FIELD_NAMES = 'a field: state, title, ref, hlevel, model, archived, created, updated, parent or a field of the project';

/** The key of `ResolveContext.users` for a user reference. */
export function userKey(user: Extract<UserRef, { kind: 'name' }>): string {
  return `${user.displayName ? 'any' : 'username'}:${user.name.toLowerCase()}`;
}

/** Every `@name` of the filter, to look the users up in one go. */
export function userRefs(expr: FilterExpr): Array<Extract<UserRef, { kind: 'name' }>> {
  const found: Array<Extract<UserRef, { kind: 'name' }>> = [];
  const visit = (e: FilterExpr): void => {
    if (e.kind === 'and' || e.kind === 'or') e.items.forEach(visit);
    else if (e.kind === 'not') visit(e.item);
    else if (e.kind === 'member' && e.user.kind === 'name') found.push(e.user);
    else if ((e.kind === 'compare' || e.kind === 'in') && e.value.kind === 'user' && e.value.user.kind === 'name') {
      found.push(e.value.user);
    }
  };
  visit(expr);
  return found;
}

/** The `users` map of a ResolveContext, from the users `userRefs` were looked up to. */
export function userMap(
  refs: Array<Extract<UserRef, { kind: 'name' }>>,
  users: Array<{ id: number; username: string; displayName: string }>,
): Map<string, number[]> {
  const map = new Map<string, number[]>();
  for (const ref of refs) {
    const name = ref.name.toLowerCase();
    const ids = users
      .filter((u) => u.username.toLowerCase() === name || (ref.displayName && u.displayName.toLowerCase() === name))
      .map((u) => u.id);
    map.set(userKey(ref), ids);
  }
  return map;
}

/** True when the filter tests `archived`: it then decides about archived cards itself. */
export function mentionsArchived(expr: FilterExpr): boolean {
  if (expr.kind === 'and' || expr.kind === 'or') return expr.items.some(mentionsArchived);
  if (expr.kind === 'not') return mentionsArchived(expr.item);
  return (expr.kind === 'compare' || expr.kind === 'in') && expr.field.kind === 'builtin' && expr.field.name === 'archived';
}

/**
 * True when resolving the filter reads the projects' fields or models: a
 * field compared (or `in`), `model`, or `@user` (any members field).
 */
export function needsSchema(expr: FilterExpr): boolean {
  switch (expr.kind) {
    case 'and':
    case 'or':
      return expr.items.some(needsSchema);
    case 'not':
      return needsSchema(expr.item);
    case 'member':
      return true;
    case 'compare':
    case 'in':
      return expr.field.kind === 'custom' || expr.field.name === 'model';
    default:
      return false;
  }
}

/** Turns a parsed filter into a condition over the projects' data; unknown fields and bad values → FilterError. */
export function resolveFilter(expr: FilterExpr, ctx: ResolveContext): Condition {
  switch (expr.kind) {
    case 'all':
      return { kind: 'all' };
    case 'and':
    case 'or':
      return { kind: expr.kind, items: expr.items.map((e) => resolveFilter(e, ctx)) };
    case 'not':
      return { kind: 'not', item: resolveFilter(expr.item, ctx) };
    case 'text':
      return { kind: 'card', term: { kind: 'title', match: 'contains', text: expr.text } };
    case 'ref':
      return { kind: 'card', term: { kind: 'ref', op: '=', value: expr.ref } };
    case 'group':
      return { kind: 'group', term: { kind: 'group', typeIds: null, match: 'equals', title: expr.name } };
    case 'member': {
      // Any members field: named by id, so the query can start from the values of the user.
      const userIds = usersOf(expr.user, ctx);
      const fields = ctx.schema.fields.filter((f) => f.type === 'members').map((f) => ({ id: f.id, modelId: f.modelId }));
      return userIds.length && fields.length ? { kind: 'field', term: { kind: 'member', fields, userIds } } : { kind: 'none' };
    }
    case 'compare':
    case 'in': {
      const op: Op = expr.kind === 'in' ? 'in' : expr.op === '!=' ? '=' : expr.op;
      const condition = compare(expr.field, op, expr.opPosition, expr.value, ctx);
      return expr.kind === 'compare' && expr.op === '!=' ? { kind: 'not', item: condition } : condition;
    }
  }
}

function compare(field: FieldName, op: Op, opPosition: number, value: FilterValue, ctx: ResolveContext): Condition {
  if (field.kind === 'builtin') return builtin(field.name, op, opPosition, value, ctx);
  // In the order the fields were defined, whatever order the schema came in:
  // when no type can read the value, the error is the first type's.
  const fields = namedInEachProject(ctx.schema.fields, field.name).sort((a, b) => a.id - b.id);
  if (!fields.length) throw new FilterError(field.position, FIELD_NAMES, `unknown field "${field.name}"; expected ${FIELD_NAMES}`);
  // In several projects one name may have several types: each type reads the
  // value its own way, and the types that cannot are left out (an error only
  // when none can).
  const byKind = new Map<FieldKind, FilterField[]>();
  for (const f of fields) appendTo(byKind, kindOf(f), f);
  const parts: Condition[] = [];
  let firstError: unknown;
  for (const [kind, group] of byKind) {
    try {
      parts.push(fieldCondition(kind, group, op, opPosition, value, ctx));
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      firstError ??= error;
    }
  }
  if (!parts.length) throw firstError;
  return parts.length === 1 ? parts[0] : { kind: 'or', items: parts };
}

/**
 * The fields or models `name` names in each project (`sameNamed`, as the
 * importer finds them): those lower() folds as the unique index compares
 * names, else those `foldCase` folds as it. Project by project, so that the
 * projects of a /search each find theirs ('οδος' finds a field 'οδος' in one
 * project and 'ΟΔΟΣ' in another that has no 'οδος').
 */
function namedInEachProject<T extends { projectId: number; name: string }>(items: readonly T[], name: string): T[] {
  const byProject = new Map<number, T[]>();
  for (const item of items) appendTo(byProject, item.projectId, item);
  return [...byProject.values()].flatMap((inProject) => sameNamed(inProject, name, (item) => item.name));
}

function kindOf(f: FilterField): FieldKind {
  if (f.type === 'content') return 'text';
  if (f.type === 'date') return f.options.period ? 'period' : 'date';
  return f.type;
}

function refuseOp(opPosition: number, what: string, ops: string): never {
  throw new FilterError(opPosition, ops, `${what} takes ${ops}`);
}

function builtin(name: BuiltinField, op: Op, opPosition: number, value: FilterValue, ctx: ResolveContext): Condition {
  if (op === 'in') refuseOp(opPosition, `"in" applies to multi-valued fields; ${name}`, name === 'title' ? '= != ~=' : 'comparisons');
  const card = (term: Extract<Condition, { kind: 'card' }>['term']): Condition => ({ kind: 'card', term });
  switch (name) {
    case 'title':
      if (op !== '=' && op !== '~=') refuseOp(opPosition, 'title', '= != ~=');
      return card({ kind: 'title', match: op === '=' ? 'equals' : 'contains', text: textValue(value) });
    case 'ref':
    case 'hlevel':
      return card({ kind: name, op: orderOp(op, opPosition, name), value: wholeValue(value) });
    case 'created':
    case 'updated':
      return card({ kind: name, op: orderOp(op, opPosition, name), span: timeSpanValue(value, ctx.today) });
    case 'parent':
      if (op !== '=') refuseOp(opPosition, 'parent', '= !=');
      return card({ kind: 'parent', ref: wholeValue(value) });
    case 'state':
      if (op !== '=') refuseOp(opPosition, 'state', '= !=');
      return card({ kind: 'state', state: stateValue(value) });
    case 'archived':
      if (op !== '=') refuseOp(opPosition, 'archived', '= !=');
      return card({ kind: 'archived', archived: boolValue(value) });
    case 'model': {
      if (op !== '=') refuseOp(opPosition, 'model', '= !=');
      const modelIds = namedInEachProject(ctx.schema.models, textValue(value)).map((m) => m.id);
      return modelIds.length ? card({ kind: 'model', modelIds }) : { kind: 'none' };
    }
  }
}

function orderOp(op: Op, opPosition: number, what: string): FilterOrderOp {
  if (!ORDER_OPS.has(op)) refuseOp(opPosition, what, '= != > >= < <=');
  return op as FilterOrderOp;
}

function textValue(value: FilterValue): string {
  if (value.kind !== 'text') throw new FilterError(value.position, 'a word or "text"', 'expected a word or "text", found a user');
  return value.text;
}

function usersOf(user: UserRef, ctx: ResolveContext): number[] {
  return user.kind === 'me' ? [ctx.meId] : (ctx.users.get(userKey(user)) ?? []);
}

function userValue(value: FilterValue, ctx: ResolveContext): number[] {
  if (value.kind !== 'user') throw new FilterError(value.position, 'a user (@name, @{name} or @me)');
  return usersOf(value.user, ctx);
}

function fieldCondition(kind: FieldKind, group: FilterField[], op: Op, opPosition: number, value: FilterValue, ctx: ResolveContext): Condition {
  const fields: FilterFieldRef[] = group.map((f) => ({ id: f.id, modelId: f.modelId }));
  const field = (term: Extract<Condition, { kind: 'field' }>['term']): Condition => ({ kind: 'field', term });
  const multi = 'multi-valued fields (members, relationships, likes, files, group types)';
  switch (kind) {
    case 'text':
      if (op !== '=' && op !== '~=') refuseOp(opPosition, 'a text field', '= != ~=');
      return field({ kind: 'text', fields, match: op === '=' ? 'equals' : 'contains', text: textValue(value) });
    case 'number':
      return field({ kind: 'number', fields, op: orderOp(op, opPosition, 'a number field'), value: numberValue(value) });
    case 'bool':
      if (op !== '=') refuseOp(opPosition, 'a bool field', '= !=');
      return field({ kind: 'bool', fields, value: boolValue(value) });
    case 'date':
    case 'period':
      return field({ kind, fields, op: orderOp(op, opPosition, 'a date field'), day: dayValue(value, ctx.today) });
    case 'time':
      return field({ kind: 'time', fields, op: orderOp(op, opPosition, 'a time field'), time: timeValue(value) });
    case 'members': {
      if (op !== '=' && op !== 'in') refuseOp(opPosition, 'a members field', `= != or "in" (${multi})`);
      const userIds = userValue(value, ctx);
      return userIds.length ? field({ kind: 'member', fields, userIds }) : { kind: 'none' };
    }
    case 'relationships':
      if (op !== '=' && op !== 'in') refuseOp(opPosition, 'a relationships field', '= != or "in"');
      return field({ kind: 'relationship', fields, ref: wholeValue(value) });
    case 'likes':
      if (op === 'in') {
        const userIds = userValue(value, ctx);
        return userIds.length ? field({ kind: 'liked', fields, userIds }) : { kind: 'none' };
      }
      return field({ kind: 'likes', fields, op: orderOp(op, opPosition, 'a likes field'), value: numberValue(value) });
    case 'files':
      if (op !== '=' && op !== '~=' && op !== 'in') refuseOp(opPosition, 'a files field', '= != ~= or "in"');
      return field({ kind: 'file', fields, match: op === '~=' ? 'contains' : 'equals', text: textValue(value) });
    case 'group_type': {
      if (op !== '=' && op !== '~=' && op !== 'in') refuseOp(opPosition, 'a group type field', '= != ~= or "in"');
      const typeIds = group.map((f) => f.groupTypeId).filter((id): id is number => id !== null);
      return { kind: 'group', term: { kind: 'group', typeIds, match: op === '~=' ? 'contains' : 'equals', title: textValue(value) } };
    }
  }
}
