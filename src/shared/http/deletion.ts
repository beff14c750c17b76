import { applyDecorators, Delete, HttpCode } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { ID_SCHEMA } from './api-properties.js';

/** What every deletion answers (DESIGN.md §2): the original's clients parse every answer as JSON. */
export interface Deleted {
  id: number;
  deleted: true;
}

export const deleted = (id: number): Deleted => ({ id, deleted: true });

/**
 * A DELETE route answering 200 with `{"id": <id>, "deleted": true}` instead of
 * an empty 204; the handler returns `deleted(id)` once the deletion is done.
 */
export function DeletionRoute(path: string, what: string) {
  return applyDecorators(
    Delete(path),
    HttpCode(200),
    ApiOkResponse({
      description: `${what}; the body names the id that was deleted`,
      schema: {
        type: 'object',
        required: ['id', 'deleted'],
        properties: { id: ID_SCHEMA, deleted: { type: 'boolean', enum: [true] } },
      },
    }),
  );
}
