import {
  ApiExtension,
  type EncodingObject,
  type MediaTypeObject,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { AT_LEAST_ONE_PROPERTY, ID_SCHEMA, MAX_ID } from './api-properties.js';

/** The form encoding every write reads beside JSON (DESIGN.md §2: parameters may come as form fields). */
const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';
/** The operation extension ApiMediaSchemas writes and documentInputs reads (and removes). */
const MEDIA_SCHEMAS = 'x-media-schemas';

/**
 * A body whose schema differs by media type (a multipart `value` is a file,
 * the JSON one a value of any type): Swagger gives every media type the
 * `@ApiBody` schema, and documentInputs puts these in their place.
 */
export const ApiMediaSchemas = (schemas: Record<string, SchemaObject>): MethodDecorator => ApiExtension(MEDIA_SCHEMAS, schemas);

/**
 * States in the document what the API reads where Swagger's reading of the
 * controllers falls short: an id in the path is an integer from 1 to 2^53-1
 * (ParseIdPipe; anything else is a 404), a body read as JSON is read as form
 * fields too, and a body marked AtLeastOneProperty needs one property.
 * Each request body says what the server takes (requestSchema), and a form's
 * object properties travel as JSON text (jsonTextEncoding).
 * `idParameters` names the operation's path parameters that ParseIdPipe reads.
 */
export function documentInputs(document: OpenAPIObject, operation: OperationObject, idParameters: string[]): void {
  for (const parameter of operation.parameters ?? []) {
    if (!('in' in parameter) || parameter.in !== 'path' || !idParameters.includes(parameter.name)) continue;
    (parameter as ParameterObject).schema = { type: 'integer', minimum: 1, maximum: MAX_ID };
  }
  const content = operation.requestBody && 'content' in operation.requestBody ? operation.requestBody.content : undefined;
  const json = content?.['application/json'];
  if (content && json && !content[FORM]) content[FORM] = { schema: json.schema };
  const extensions = operation as OperationObject & { [MEDIA_SCHEMAS]?: Record<string, SchemaObject> };
  const own = extensions[MEDIA_SCHEMAS];
  delete extensions[MEDIA_SCHEMAS];
  for (const [type, media] of Object.entries(content ?? {})) {
    if (own?.[type]) media.schema = own[type];
    // An inline schema is the controller's constant, and may be another media type's too: each gets its own copy.
    if (media.schema && !('$ref' in media.schema)) media.schema = structuredClone(media.schema);
    const schema = resolved(document, media.schema);
    if (!schema) continue;
    requestSchema(schema);
    if (type === FORM || type === MULTIPART) encodeJsonText(document, media, schema);
  }
  for (const name of AT_LEAST_ONE_PROPERTY) {
    const schema = document.components?.schemas?.[name] as SchemaObject | undefined;
    if (schema) schema.minProperties = 1;
  }
}

function resolved(document: OpenAPIObject, schema: SchemaObject | ReferenceObject | undefined): SchemaObject | undefined {
  if (!schema || !('$ref' in schema)) return schema;
  return document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] as SchemaObject | undefined;
}

/**
 * A request body as the server reads it, so that a generated client's types
 * allow what it takes and no more: a property it does not know is a 400 (the
 * ValidationPipe's forbidNonWhitelisted, and each free-form body's own
 * check), so `additionalProperties: false` unless the schema says otherwise
 * (the flat form of POST /cards/{id}/attributes); an id is an integer from 1
 * to 2^53-1 (DESIGN.md §2); and a default is said in words, not as
 * `default`, which generators (openapi-typescript) read as "always present"
 * and so make required. Idempotent: a component may be the body of several
 * operations.
 */
function requestSchema(schema: SchemaObject): void {
  if (schema.type === 'object' && schema.additionalProperties === undefined) schema.additionalProperties = false;
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if ('$ref' in property) continue;
    if ('default' in property) {
      const said = `default ${JSON.stringify(property.default)}`;
      property.description = property.description ? (property.description.includes(said) ? property.description : `${property.description}; ${said}`) : said;
      delete property.default;
    }
    if (/^(id|.+_id)$/.test(name) && property.type === 'integer') {
      property.minimum ??= ID_SCHEMA.minimum;
      property.maximum ??= ID_SCHEMA.maximum;
    }
  }
}

/**
 * A form cannot nest (`extended: false` forms, multipart text parts): an
 * object property is sent as one field of JSON text, which the server reads
 * (formJsonObject, the importer's objectOrJson). The encoding says so, for
 * generators to serialise it as JSON rather than as `a[b]=c` fields, which
 * the server refuses.
 */
function encodeJsonText(document: OpenAPIObject, media: MediaTypeObject, schema: SchemaObject): void {
  const encoding: EncodingObject = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (resolved(document, property)?.type === 'object') encoding[name] = { contentType: 'application/json' };
  }
  if (Object.keys(encoding).length) media.encoding = { ...media.encoding, ...encoding };
}
