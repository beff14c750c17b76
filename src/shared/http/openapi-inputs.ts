import type { OpenAPIObject, OperationObject, ParameterObject, SchemaObject } from '@nestjs/swagger';
import { AT_LEAST_ONE_PROPERTY, MAX_ID } from './api-properties.js';

/** The form encoding every write reads beside JSON (DESIGN.md §2: parameters may come as form fields). */
const FORM = 'application/x-www-form-urlencoded';

/**
 * States in the document what the API reads where Swagger's reading of the
 * controllers falls short: an id in the path is an integer from 1 to 2^53-1
 * (ParseIdPipe; anything else is a 404), a body read as JSON is read as form
 * fields too, and a body marked AtLeastOneProperty needs one property.
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
  for (const name of AT_LEAST_ONE_PROPERTY) {
    const schema = document.components?.schemas?.[name] as SchemaObject | undefined;
    if (schema) schema.minProperties = 1;
  }
}
