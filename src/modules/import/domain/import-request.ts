import { requireId } from '../../../shared/domain/ids.js';
import { longerThan } from '../../../shared/domain/safe-text.js';
import { invalidImportInput } from './import.errors.js';

/** Where the rows go: an existing project, or a new one made by the import. */
export type ImportTarget =
  | { kind: 'existing'; projectId: number }
  | { kind: 'new'; organizationId: number; title: string };

/** The import body of the spec, checked for shape; the mapping is checked against the sheet later. */
export interface ImportRequest {
  discoverFileId: number;
  target: ImportTarget;
  mapping: unknown;
  updateField: unknown;
  updateOnly: boolean;
  ignoreHeader: boolean;
  dryRun: boolean;
}

const MAX_TITLE = 1024;

/** JSON booleans, and `true`/`false` as text for form and query parameters. */
function optionalBool(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw invalidImportInput(field, 'must be true or false');
}

/** An object, or its JSON text (a form field cannot hold an object). */
function objectOrJson(value: unknown, field: string): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw invalidImportInput(field, 'must be an object');
  }
}

function target(body: Record<string, unknown>): ImportTarget {
  const hasProject = body.project_id !== undefined && body.project_id !== null;
  const hasTitle = body.title !== undefined && body.title !== null;
  if (hasProject && hasTitle) throw invalidImportInput('project_id', 'give project_id (an existing project) or title (a new one), not both');
  if (hasProject) return { kind: 'existing', projectId: requireId(body.project_id, 'project_id') };
  if (!hasTitle) throw invalidImportInput('project_id', 'is required, unless title and organization_id create a new project');
  const title = body.title;
  if (typeof title !== 'string' || !title.trim()) throw invalidImportInput('title', 'must be a non-empty string');
  if (longerThan(title, MAX_TITLE)) throw invalidImportInput('title', `must be at most ${MAX_TITLE} characters`);
  if (body.organization_id === undefined) throw invalidImportInput('organization_id', 'is required with title (the team of the new project)');
  return { kind: 'new', organizationId: requireId(body.organization_id, 'organization_id'), title: title.trim() };
}

function ignoreHeader(raw: unknown): boolean {
  const options = objectOrJson(raw, 'options');
  if (options === undefined || options === null) return false;
  if (typeof options !== 'object' || Array.isArray(options)) throw invalidImportInput('options', 'must be an object');
  const unknownKey = Object.keys(options).find((k) => k !== 'ignore_header');
  if (unknownKey !== undefined) throw invalidImportInput(`options.${unknownKey}`, 'is not an option (the only one is ignore_header)');
  return optionalBool((options as Record<string, unknown>).ignore_header, 'options.ignore_header');
}

const KEYS = new Set([
  'discover_file_id',
  'project_id',
  'title',
  'organization_id',
  'mapping',
  'update_field',
  'update_only',
  'options',
  'dry_run',
]);

/** Reads the import body (spec "Spreadsheet importer", DESIGN.md §8); each problem names its property. */
export function parseImportRequest(body: Record<string, unknown>): ImportRequest {
  const unknownKey = Object.keys(body).find((k) => !KEYS.has(k));
  if (unknownKey !== undefined) throw invalidImportInput(unknownKey, 'is not a property of an import');
  if (body.discover_file_id === undefined) throw invalidImportInput('discover_file_id', 'is required: the file_id that discover answered');
  const request: ImportRequest = {
    discoverFileId: requireId(body.discover_file_id, 'discover_file_id'),
    target: target(body),
    mapping: objectOrJson(body.mapping, 'mapping'),
    updateField: body.update_field,
    updateOnly: optionalBool(body.update_only, 'update_only'),
    ignoreHeader: ignoreHeader(body.options),
    dryRun: optionalBool(body.dry_run, 'dry_run'),
  };
  if (request.updateOnly && (request.updateField === undefined || request.updateField === null || request.updateField === '')) {
    throw invalidImportInput('update_only', 'needs update_field: rows are matched to cards by it');
  }
  return request;
}
