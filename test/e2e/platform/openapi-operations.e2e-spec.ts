import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Schema } from '../../support/openapi.js';
import { as, createTestApp, type TestApp } from '../../support/test-app.js';
import { API } from '../../support/workspace-client.js';

interface OperationObject {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Document {
  info: { license?: { name: string; url?: string } };
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * Every operationId of the document, sorted. Generated clients (openapi-fetch,
 * @hey-api/openapi-ts) name their calls by them, and src/shared/http/error-responses.ts
 * keys on them: a route keeps its id wherever its method moves
 * (`@ApiOperation({ operationId })`). Changing this list breaks those clients:
 * do it only on purpose, and say so in the changelog.
 */
const OPERATION_IDS = [
  'CardAttributesController_append',
  'CardAttributesController_getChoices',
  'CardAttributesController_pop',
  'CardAttributesController_setMany',
  'CardAttributesController_setModel',
  'CardAttributesController_setOne',
  'CardMembershipsController_addToGroup',
  'CardMembershipsController_removeFromGroup',
  'CardMembershipsController_removeFromGroupType',
  'CardStreamController_comment',
  'CardStreamController_streamPage',
  'CardsController_archive',
  'CardsController_children',
  'CardsController_create',
  'CardsController_delete',
  'CardsController_get',
  'CardsController_relocate',
  'CardsController_restore',
  'CardsController_setState',
  'CardsController_update',
  'FieldDefinitionsController_attributeTypes',
  'FieldDefinitionsController_create',
  'FieldDefinitionsController_delete',
  'FieldDefinitionsController_get',
  'FieldDefinitionsController_list',
  'FieldDefinitionsController_update',
  'FilesController_download',
  'GroupTypesController_create',
  'GroupTypesController_delete',
  'GroupTypesController_get',
  'GroupTypesController_list',
  'GroupTypesController_update',
  'GroupsController_available',
  'GroupsController_create',
  'GroupsController_delete',
  'GroupsController_get',
  'GroupsController_ofType',
  'GroupsController_update',
  'HealthController_health',
  'HealthController_ready',
  'MeController_createKey',
  'MeController_listKeys',
  'MeController_me',
  'MeController_revokeKey',
  'ModelsController_create',
  'ModelsController_createField',
  'ModelsController_fields',
  'ModelsController_get',
  'ModelsController_list',
  'OrganizationsController_addMember',
  'OrganizationsController_changeRole',
  'OrganizationsController_create',
  'OrganizationsController_get',
  'OrganizationsController_list',
  'OrganizationsController_listProjects',
  'OrganizationsController_members',
  'OrganizationsController_removeMember',
  'ProjectCardsController_list',
  'ProjectCreationController_create',
  'ProjectsController_delete',
  'ProjectsController_get',
  'ProjectsController_listVisible',
  'SearchController_find',
  'SpreadsheetImportController_deleteUpload',
  'SpreadsheetImportController_discover',
  'SpreadsheetImportController_import',
];

const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));

/** What a client generated from the document is typed by: ids, summaries, tags, required response properties, lint. */
describe('the OpenAPI document as a client generator reads it', () => {
  let t: TestApp;
  let doc: Document;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http.get(`${API}/spec.json`).expect(200)).body as Document;
  });
  afterAll(() => t.close());

  it('has exactly the operationIds generated clients call, each once', () => {
    const ids = operationsOf(doc).map(({ op }) => op.operationId);
    expect([...ids].sort()).toEqual(OPERATION_IDS);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every operation a short imperative summary', () => {
    const without = operationsOf(doc).filter(({ op }) => !/^[A-Z][a-z]+ \S/.test(op.summary ?? '') || op.summary!.length > 80 || op.summary!.endsWith('.'));
    expect(without.map(({ name, op }) => `${name}: ${op.summary}`)).toEqual([]);
  });

  it('describes each tag its operations use, once', () => {
    const used = new Set(operationsOf(doc).flatMap(({ op }) => op.tags ?? []));
    const listed = (doc.tags ?? []).map((tag) => tag.name);
    expect([...listed].sort()).toEqual([...used].sort());
    expect((doc.tags ?? []).filter((tag) => !tag.description)).toEqual([]);
  });

  it('marks required every property of a success answer (the server sends each), the importer\'s included', () => {
    const optional: string[] = [];
    const seen = new Set<string>();
    const walk = (schema: Schema | undefined, where: string): void => {
      if (!schema) return;
      if (schema.$ref) {
        const name = schema.$ref.split('/').pop()!;
        if (seen.has(name)) return;
        seen.add(name);
        return walk(doc.components.schemas[name], `#${name}`);
      }
      for (const [i, s] of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].entries()) walk(s, `${where}[${i}]`);
      walk(schema.items, `${where}.items`);
      if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}.*`);
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if (!(schema.required ?? []).includes(key)) optional.push(`${where}.${key}`);
        walk(property, `${where}.${key}`);
      }
    };
    for (const { name, op } of operationsOf(doc)) {
      for (const [status, answer] of Object.entries(op.responses)) {
        if (Number(status) >= 400) continue;
        for (const [type, media] of Object.entries(answer.content ?? {})) walk(media.schema, `${name} ${status} ${type}`);
      }
    }
    expect(seen.size).toBeGreaterThan(5);
    expect(optional).toEqual([]);
    const discover = doc.paths[`${API}/importers/spreadsheet/discover`].post.responses['201'].content!['application/json'].schema!;
    expect(discover.required).toEqual(['file_id', 'format', 'rows', 'fields']);
    expect(discover.properties!.fields.items!.required).toEqual(['column', 'name', 'samples']);
  });

  it('declares what a FILTER.INVALID answer puts in errors[0] (position, expected)', async () => {
    const u = await t.user();
    const res = await t.http.get(`${API}/search`).query({ filter: 'title = ' }).set(as(u)).expect(400);
    expect(res.body.type).toBe('FILTER.INVALID');
    const items = doc.components.schemas.Problem.properties!.errors.items!.anyOf!;
    const declared = items.map((item) => Object.keys(item.properties ?? {}));
    // Some alternative declares every key the item has (ajv strict, additionalProperties false).
    const sent = Object.keys(res.body.errors[0]).sort();
    expect(sent).toEqual(['expected', 'field', 'message', 'position']);
    expect(declared.some((keys) => sent.every((key) => keys.includes(key)))).toBe(true);
  });

  it('says /health and /ready take no credentials, and the license package.json gives', () => {
    for (const path of ['health', 'ready']) expect({ path, security: doc.paths[`${API}/${path}`].get.security }).toEqual({ path, security: [] });
    const { license } = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string };
    expect(doc.info.license).toEqual({ name: license, url: expect.stringMatching(/^https:\/\//) });
  });
});
