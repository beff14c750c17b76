import { isReservedName, longerThan, RESERVED_NAME_MESSAGE } from '../../../shared/domain/safe-text.js';
import { foldCase } from '../../../shared/domain/fold-case.js';
import type { FieldType } from '../../fields/index.js';
import { invalidImportInput } from './import.errors.js';

/** Field types a cell can fill (`group_type` is a context by another name). */
export const IMPORTABLE_TYPES = ['text', 'content', 'number', 'bool', 'date', 'time', 'members', 'relationships', 'likes', 'group_type'] as const satisfies readonly FieldType[];
export type ImportableType = (typeof IMPORTABLE_TYPES)[number];
/**
 * Every other field type, with the 400 that refuses it: a new field type
 * does not compile until it is either importable or here with its reason.
 */
const NOT_IMPORTABLE: Record<Exclude<FieldType, ImportableType>, string> = {
  // Each cell would be URLs for the server to fetch inside the import: requests to wherever a sheet points (SSRF), and minutes per file.
  files: 'files cannot be filled from a spreadsheet (the server would fetch a URL per cell); upload files to the cards instead',
};
export type AttributeImportType = Exclude<ImportableType, 'group_type'>;
/** Types an update can match on (`update_field`): values compared as stored. */
const MATCHABLE_TYPES: readonly AttributeImportType[] = ['text', 'content', 'number', 'bool', 'date', 'time'];

/** What one mapped column feeds (the spec's mapping table). */
export type ColumnSpec =
  | { type: 'title' }
  | { type: 'attribute'; attrType: AttributeImportType; name: string }
  | { type: 'context'; name: string }
  | { type: 'model' }
  | { type: 'comment' }
  | { type: 'children' }
  | { type: 'ref' };

export interface MappedColumn {
  /** 0-based column: the mapping key as a number. */
  column: number;
  spec: ColumnSpec;
}

/** The mapping, validated against the discovered sheet; columns in ascending order. */
export interface ImportMapping {
  columns: MappedColumn[];
  titleColumn: number;
}

/** How rows find the cards they update (`update_field`). */
export type UpdateMatch =
  | { kind: 'title'; column: number }
  | { kind: 'ref'; column: number }
  | { kind: 'attribute'; column: number; name: string };

export const MAPPING_TYPES = ['title', 'attribute', 'context', 'model', 'comment', 'children', 'ref'] as const;
/** Types that may map at most one column. */
const SINGLE = new Set(['title', 'model', 'ref']);
const MAX_NAME = 1024;
const KEY = /^(0|[1-9]\d{0,5})$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why a trimmed name cannot name a field or group type, as their module says (the import's write would refuse it), or undefined. */
export type NameProblem = (name: string) => string | undefined;

function requireName(raw: Record<string, unknown>, at: string, nameProblem: NameProblem): string {
  const name = raw.name;
  if (typeof name !== 'string' || !name.trim()) throw invalidImportInput(`${at}.name`, 'is required: a non-empty string');
  if (longerThan(name.trim(), MAX_NAME)) throw invalidImportInput(`${at}.name`, `must be at most ${MAX_NAME} characters`);
  if (isReservedName(name)) throw invalidImportInput(`${at}.name`, RESERVED_NAME_MESSAGE);
  const problem = nameProblem(name.trim());
  if (problem) throw invalidImportInput(`${at}.name`, problem);
  return name.trim();
}

function onlyKeys(raw: Record<string, unknown>, allowed: string[], at: string): void {
  const extra = Object.keys(raw).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw invalidImportInput(`${at}.${extra}`, `is not a key of a ${String(raw.type)} mapping`);
}

function parseSpec(raw: unknown, at: string, nameProblem: NameProblem): ColumnSpec {
  if (!isObject(raw)) throw invalidImportInput(at, 'must be an object with a "type"');
  const type = raw.type;
  if (typeof type !== 'string' || !(MAPPING_TYPES as readonly string[]).includes(type)) {
    throw invalidImportInput(`${at}.type`, `must be one of ${MAPPING_TYPES.join(', ')}`);
  }
  if (type === 'attribute') {
    onlyKeys(raw, ['type', 'attr_type', 'name'], at);
    const attrType = raw.attr_type;
    if (typeof attrType === 'string' && Object.hasOwn(NOT_IMPORTABLE, attrType)) {
      throw invalidImportInput(`${at}.attr_type`, NOT_IMPORTABLE[attrType as keyof typeof NOT_IMPORTABLE]);
    }
    if (typeof attrType !== 'string' || !(IMPORTABLE_TYPES as readonly string[]).includes(attrType)) {
      throw invalidImportInput(`${at}.attr_type`, `must be one of ${IMPORTABLE_TYPES.join(', ')} (other field types cannot be filled from a spreadsheet)`);
    }
    const name = requireName(raw, at, nameProblem);
    // A group_type field is the field of a group type: the same thing as a context.
    return attrType === 'group_type' ? { type: 'context', name } : { type: 'attribute', attrType: attrType as AttributeImportType, name };
  }
  if (type === 'context') {
    onlyKeys(raw, ['type', 'name'], at);
    return { type, name: requireName(raw, at, nameProblem) };
  }
  onlyKeys(raw, ['type'], at);
  return { type } as ColumnSpec;
}

/** Names given to attributes and contexts must not collide: a context is a group type with a field of its name. */
function checkNames(columns: MappedColumn[]): void {
  const seen = new Map<string, number>();
  for (const { column, spec } of columns) {
    if (spec.type !== 'attribute' && spec.type !== 'context') continue;
    const key = foldCase(spec.name);
    const other = seen.get(key);
    if (other !== undefined) throw invalidImportInput(`mapping.${column}.name`, `"${spec.name}" is mapped from column ${other} already`);
    seen.set(key, column);
  }
}

/**
 * Validates the spec's mapping object against the discovered sheet: keys are
 * canonical column numbers within the sheet, each value a known type with its
 * keys, exactly one title, at most one model and one ref column, and
 * attribute and context names unique (case-insensitively).
 */
/**
 * The mapping, checked before any row: `nameProblem` gives the rules of the
 * modules that store the names (so `dry_run` refuses what the write would,
 * naming `mapping.<key>.name`).
 */
export function parseMapping(raw: unknown, columnCount: number, nameProblem: NameProblem = () => undefined): ImportMapping {
  if (!isObject(raw)) throw invalidImportInput('mapping', 'is required: an object keyed by column number');
  const columns: MappedColumn[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (!KEY.test(key)) throw invalidImportInput(`mapping.${key}`, 'keys are column numbers: "0" is the first column');
    const column = Number(key);
    if (column >= columnCount) {
      throw invalidImportInput(`mapping.${key}`, `the spreadsheet has no column ${key} (it has ${columnCount})`);
    }
    columns.push({ column, spec: parseSpec(value, `mapping.${key}`, nameProblem) });
  }
  columns.sort((a, b) => a.column - b.column);
  for (const type of SINGLE) {
    const found = columns.filter((c) => c.spec.type === type);
    if (found.length > 1) throw invalidImportInput(`mapping.${found[1].column}`, `only one column may be mapped to ${type}`);
  }
  const title = columns.find((c) => c.spec.type === 'title');
  if (!title) throw invalidImportInput('mapping', 'a column must be mapped to the card title ({"type": "title"})');
  checkNames(columns);
  return { columns, titleColumn: title.column };
}

/**
 * `update_field`: `title`, `ref`, or the name of a mapped attribute (DESIGN.md
 * §8), each in any case, as field names are. `title` and `ref` spelled so
 * are the keywords even beside an attribute of that name; another spelling
 * ("Title", "REF") is a mapped attribute of that name when there is one,
 * else the keyword.
 */
export function parseUpdateField(raw: unknown, mapping: ImportMapping): UpdateMatch | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') throw invalidImportInput('update_field', 'must be "title", "ref" or a mapped attribute name');
  if (raw === 'title' || raw === 'ref') return keywordMatch(raw, mapping);
  const folded = foldCase(raw.trim());
  const attribute = mapping.columns.find((c) => c.spec.type === 'attribute' && foldCase(c.spec.name) === folded);
  if (!attribute && (folded === 'title' || folded === 'ref')) return keywordMatch(folded, mapping);
  if (!attribute || attribute.spec.type !== 'attribute') {
    throw invalidImportInput('update_field', `"${raw.slice(0, 100)}" is neither title, ref nor a mapped attribute`);
  }
  if (!MATCHABLE_TYPES.includes(attribute.spec.attrType)) {
    throw invalidImportInput('update_field', `cards cannot be matched on a ${attribute.spec.attrType} attribute; use title, ref or a ${MATCHABLE_TYPES.join('/')} attribute`);
  }
  return { kind: 'attribute', column: attribute.column, name: attribute.spec.name };
}

function keywordMatch(keyword: 'title' | 'ref', mapping: ImportMapping): UpdateMatch {
  if (keyword === 'title') return { kind: 'title', column: mapping.titleColumn };
  const ref = mapping.columns.find((c) => c.spec.type === 'ref');
  if (!ref) throw invalidImportInput('update_field', 'matching by ref needs a column mapped to ref');
  return { kind: 'ref', column: ref.column };
}
