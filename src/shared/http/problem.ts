import type { OpenAPIObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import type { Response } from 'express';
import type { FieldProblem } from '../domain/domain-error.js';

export interface Problem {
  status: number;
  type: string;
  title: string;
  detail: string;
  errors?: FieldProblem[];
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function titleFor(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Client Error');
}

/** Writes an RFC 9457 body; `error` repeats `detail` for existing clients (DESIGN.md §2). */
export function sendProblem(res: Response, p: Problem): void {
  if (res.headersSent) return;
  for (const [k, v] of Object.entries(p.headers ?? {})) res.setHeader(k, v);
  const body: Record<string, unknown> = {
    ...(p.extra ?? {}),
    type: p.type,
    title: p.title,
    status: p.status,
    detail: p.detail,
    error: p.detail,
  };
  if (p.errors?.length) body.errors = p.errors;
  res.status(p.status).type('application/problem+json').send(JSON.stringify(body));
}

/** The problem+json body that sendProblem writes, as an OpenAPI schema. */
const PROBLEM_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'RFC 9457 problem details; some errors add properties of their own (a filter error its `position` and `expected`)',
  required: ['type', 'title', 'status', 'detail', 'error'],
  properties: {
    type: { type: 'string', description: 'the error code, such as CARD.CYCLE_DETECTED or INPUT.INVALID' },
    title: { type: 'string', description: 'the status text' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    error: { type: 'string', description: 'repeats `detail` (what clients of the original service read)' },
    errors: {
      type: 'array',
      description: 'for invalid input: each property refused and why; for IMPORT.ROWS_INVALID each bad cell, by row and column',
      items: {
        anyOf: [
          {
            type: 'object',
            required: ['field', 'message'],
            properties: {
              field: { type: 'string' },
              message: { type: 'string' },
              position: { type: 'integer', description: 'a FILTER.INVALID: the 0-based offset in the filter where reading stopped (as the body\'s `position`)' },
              expected: { type: 'string', description: 'a FILTER.INVALID: what was expected at `position` (as the body\'s `expected`)' },
            },
          },
          {
            type: 'object',
            required: ['row', 'column', 'message'],
            properties: {
              row: { type: 'integer', description: "the spreadsheet's own 1-based row number" },
              column: { type: 'integer', description: 'the 0-based mapping key' },
              message: { type: 'string' },
            },
          },
        ],
      },
    },
    error_count: { type: 'integer', description: 'an IMPORT.ROWS_INVALID: how many problems in all (`errors` lists the first ones)' },
    required_scope: { type: 'string', description: 'a 403 for an OAuth token: the scope the route needs (`api_key`: only an API key may call it)' },
    position: { type: 'integer', description: 'a FILTER.INVALID: the 0-based offset in the filter where reading stopped' },
    expected: { type: 'string', description: 'a FILTER.INVALID: what was expected at `position`' },
  },
};

/**
 * An error answer of the OpenAPI document: its body is the `Problem` schema,
 * which the first call adds to the document's components.
 */
export function problemResponse(document: OpenAPIObject, description: string, headers?: ResponseObject['headers']): ResponseObject {
  document.components ??= {};
  document.components.schemas ??= {};
  document.components.schemas.Problem ??= PROBLEM_SCHEMA;
  return { description, headers, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
}
