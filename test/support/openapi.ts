import type TestAgent from 'supertest/lib/agent.js';

/** The parts of an OpenAPI 3 schema the suites read. */
export interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  nullable?: boolean;
  format?: string;
  additionalProperties?: boolean | Schema;
}

export interface Operation {
  method: string;
  /** Express form, `/api/1.0/cards/:id`. */
  path: string;
  pathParams: Array<{ name: string; type?: string }>;
  queryParams: Array<{ name: string; schema: Schema }>;
  /** Resolved JSON body schema, if the operation takes one. */
  body?: Schema;
  contentTypes: string[];
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, Schema> };
}
interface OperationObject {
  parameters?: Array<{ in: string; name: string; schema?: Schema }>;
  requestBody?: { content: Record<string, { schema?: Schema }> };
}

/** Reads the served OpenAPI document (GET /api/1.0/spec.json) into operations. */
export async function loadOperations(http: TestAgent): Promise<Operation[]> {
  const doc = (await http.get('/api/1.0/spec.json').expect(200)).body as OpenApiDocument;
  const resolve = (s: Schema | undefined): Schema | undefined => {
    if (!s?.$ref) return s;
    return doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')];
  };
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content ?? {};
      const json = content['application/json'] ?? content['application/x-www-form-urlencoded'];
      ops.push({
        method: method.toUpperCase(),
        path: path.replace(/\{(\w+)\}/g, ':$1'),
        pathParams: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => ({ name: p.name, type: p.schema?.type })),
        queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: resolve(p.schema) ?? {} })),
        body: json ? resolveDeep(json.schema, resolve) : undefined,
        contentTypes: Object.keys(content),
      });
    }
  }
  return ops;
}

function resolveDeep(s: Schema | undefined, resolve: (s: Schema | undefined) => Schema | undefined, depth = 0): Schema | undefined {
  const r = resolve(s);
  if (!r || depth > 5) return r;
  const out: Schema = { ...r };
  if (r.properties) {
    out.properties = Object.fromEntries(Object.entries(r.properties).map(([k, v]) => [k, resolveDeep(v, resolve, depth + 1) ?? {}]));
  }
  if (r.items) out.items = resolveDeep(r.items, resolve, depth + 1);
  if (r.oneOf) out.oneOf = r.oneOf.map((x) => resolveDeep(x, resolve, depth + 1) ?? {});
  return out;
}

/**
 * The smallest body the schema accepts: its required properties (or, when all
 * are optional, its first plain one) with a plain value each. `idFor(property)` supplies ids (properties named `*_id`).
 */
export function minimalBody(schema: Schema | undefined, idFor: (property: string) => number | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const required = schema?.required ?? [];
  // An update with every property optional still wants one ("give a title and/or a state").
  const names = required.length ? required : Object.keys(schema?.properties ?? {}).filter((n) => !n.endsWith('_id')).slice(0, 1);
  for (const name of names) body[name] = plainValue(name, schema!.properties?.[name] ?? {}, idFor);
  return body;
}

function plainValue(name: string, s: Schema, idFor: (property: string) => number | undefined): unknown {
  if (s.enum?.length) return s.enum[0];
  const id = idFor(name);
  if (id !== undefined) return id;
  const variant = s.oneOf?.[0] ?? s.anyOf?.[0];
  if (variant) return plainValue(name, variant, idFor);
  switch (s.type) {
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return 'walk';
  }
}
