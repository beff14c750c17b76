import type { INestApplication } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DECORATORS, type HeaderObject, type OpenAPIObject, type OperationObject, type ResponseObject } from '@nestjs/swagger';
import { IS_PUBLIC } from './actor.decorator.js';
import { HEADER_LIMIT } from './server-refusals.js';
import { documentInputs } from './openapi-inputs.js';
import { ParseIdPipe } from './parse-id.pipe.js';
import { problemResponse } from './problem.js';
import { type BodyPace, bodyPaceRule } from './slow-bodies.js';

/** One reason an operation may answer an error status, with the headers that answer carries. */
export interface ErrorReason {
  status: number;
  /** Starts with the problem's `type` where one code is meant, so a client can tell the reasons apart. */
  why: string;
  headers?: Record<string, HeaderObject>;
}

/** An operation of the OpenAPI document, with what its route handler's decorators declare. */
export interface DocumentedOperation {
  /** Upper case, as a guard sees it. */
  method: string;
  /** As the document has it before BASE_URL decides its prefix: `/api/1.0/cards/{id}`. */
  path: string;
  operation: OperationObject;
  /** Metadata the route's decorators set: the handler's own, else its controller's (as the guards read it). */
  declared<T>(key: string): T | undefined;
  /** Whether the handler validates its query string (`@Query()`): any parameter it does not name is a 400, named in the document or not. */
  readsQuery: boolean;
  /** The names of the operation's parameters in the path or in the query. */
  parameters(where: 'path' | 'query'): string[];
  /** The path parameters read by ParseIdPipe. */
  idParameters: string[];
}

/**
 * The error answers one part of the server (a guard, a pipe, a body limit)
 * gives an operation. Rules read what every route declares anyway (its
 * method, parameters, body, scope), so a new route gets its errors from
 * them without a word of its own.
 */
export type ErrorRule = (op: DocumentedOperation) => ErrorReason[];

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Lists in the document, on each operation, every error answer the rules
 * give it, as problem+json (the `Problem` schema), after stating the inputs
 * those answers refuse (documentInputs: path ids, form bodies). An error answer a route
 * documents with Swagger's decorators keeps its words, first; one documented
 * with a body of its own (the 415 of an unread body) is left as it is.
 * The 405 of a method no operation has is told once (documentMethodNotAllowed).
 */
export function documentErrors(document: OpenAPIObject, app: INestApplication, rules: ErrorRule[]): void {
  documentMethodNotAllowed(document);
  const handlers = routeHandlers(app);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const handler = handlers.get(operation.operationId ?? '');
      // Every operation comes from a controller; one that does not would lose its errors unnoticed.
      if (!handler) throw new Error(`OpenAPI operation ${method.toUpperCase()} ${operation.operationId} has no route handler`);
      const op = documentedOperation(method.toUpperCase(), path, operation, handler);
      documentInputs(document, operation, op.idParameters);
      addErrorResponses(document, operation, rules.flatMap((rule) => rule(op)));
    }
  }
}

/** The reusable response of a 405, under `components.responses`. */
export const METHOD_NOT_ALLOWED_RESPONSE = 'MethodNotAllowed';

const METHOD_NOT_ALLOWED =
  'HTTP.405: the path exists, but not with this method (`PATCH /cards/{id}`): no operation of the document has it. `Allow` lists the methods the path takes; `OPTIONS` on the path answers 204 with the same `Allow`';

/**
 * A method the path does not take (`PATCH /cards/{id}`) is a 405 HTTP.405
 * with `Allow` (ProblemDetailsFilter). OpenAPI lists answers per operation,
 * and that request is none of the document's, so no operation can list it:
 * it is told in the document's description, and given as a reusable
 * response (`#/components/responses/MethodNotAllowed`) a client can read
 * the answer's shape from.
 */
function documentMethodNotAllowed(document: OpenAPIObject): void {
  document.components ??= {};
  document.components.responses = {
    ...document.components.responses,
    [METHOD_NOT_ALLOWED_RESPONSE]: problemResponse(document, METHOD_NOT_ALLOWED, {
      Allow: { description: 'the methods the path takes (HEAD beside GET, and OPTIONS)', schema: { type: 'string', example: 'DELETE, GET, HEAD, OPTIONS, PUT' } },
    }),
  };
  const note = `Any path answers a method it does not take with 405 (\`#/components/responses/${METHOD_NOT_ALLOWED_RESPONSE}\`): ${METHOD_NOT_ALLOWED.slice('HTTP.405: '.length)}.`;
  document.info.description = document.info.description ? `${document.info.description}\n\n${note}` : note;
}

interface RouteHandler {
  controller: object;
  handler: object;
  name: string;
}

/**
 * Every controller method, by the operationId Swagger gives its operation:
 * the one its `@ApiOperation` states, else Swagger's default
 * (`Controller_method`). Two methods giving one id would make one
 * operation's errors the other's: refused.
 */
function routeHandlers(app: INestApplication): Map<string, RouteHandler> {
  const scanner = app.get(MetadataScanner);
  const found = new Map<string, RouteHandler>();
  for (const wrapper of app.get(DiscoveryService).getControllers()) {
    const controller = wrapper.metatype as (new (...args: never[]) => object) | undefined;
    if (!controller) continue;
    for (const name of scanner.getAllMethodNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, object>)[name];
      const stated = (Reflect.getMetadata(DECORATORS.API_OPERATION, handler) as { operationId?: string } | undefined)?.operationId;
      const id = stated ?? `${controller.name}_${name}`;
      if (found.has(id)) throw new Error(`OpenAPI operationId ${id} is given by two route handlers`);
      found.set(id, { controller, handler, name });
    }
  }
  return found;
}

function documentedOperation(method: string, path: string, operation: OperationObject, route: RouteHandler): DocumentedOperation {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, route.controller, route.name) ?? {}) as Record<string, RouteArgument>;
  return {
    method,
    path,
    operation,
    declared: <T>(key: string) => (Reflect.getMetadata(key, route.handler) ?? Reflect.getMetadata(key, route.controller)) as T | undefined,
    readsQuery: Object.keys(args).some((key) => key.split(':')[0] === String(RouteParamtypes.QUERY)),
    parameters: (where) => (operation.parameters ?? []).flatMap((p) => ('in' in p && p.in === where ? [p.name] : [])),
    idParameters: Object.entries(args).flatMap(([key, arg]) =>
      key.split(':')[0] === String(RouteParamtypes.PARAM) && arg.pipes?.some(isIdPipe) && typeof arg.data === 'string' ? [arg.data] : [],
    ),
  };
}

/** What Nest records of a handler's parameter (`@Param('id', ParseIdPipe)`). */
interface RouteArgument {
  data?: unknown;
  pipes?: unknown[];
}

const isIdPipe = (pipe: unknown): boolean => pipe === ParseIdPipe || pipe instanceof ParseIdPipe;

function addErrorResponses(document: OpenAPIObject, operation: OperationObject, reasons: ErrorReason[]): void {
  const own = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
  const statuses = new Set([...own, ...reasons.map((r) => String(r.status))]);
  for (const status of statuses) {
    const before = operation.responses[status] as ResponseObject | undefined;
    if (before?.content) continue;
    const mine = reasons.filter((r) => String(r.status) === status);
    const whys = [...(before?.description ? [before.description] : []), ...mine.map((r) => r.why)];
    const headers = Object.assign({}, before?.headers, ...mine.map((r) => r.headers)) as ResponseObject['headers'];
    operation.responses[status] = problemResponse(document, describe(whys), Object.keys(headers!).length ? headers : undefined);
  }
  operation.responses = Object.fromEntries(Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** One reason as it is; several as a list. */
const describe = (whys: string[]): string => (whys.length === 1 ? whys[0] : whys.map((why) => `- ${why}`).join('\n'));

const ROUTE_ERRORS = 'cardwork:route-errors';

/**
 * Error answers of a route's own use case, which no rule can tell from its
 * declarations (a use case's conflicts, an upload's caps); documentErrors
 * lists them first. Its own metadata rather than Swagger's response
 * decorators, which would drop the operation's default success answer.
 */
export function RouteErrors(...reasons: ErrorReason[]): MethodDecorator {
  return (_target, _key, descriptor) => {
    const before = (Reflect.getMetadata(ROUTE_ERRORS, descriptor.value as object) ?? []) as ErrorReason[];
    Reflect.defineMetadata(ROUTE_ERRORS, [...before, ...reasons], descriptor.value as object);
  };
}

/** The conflicts (409) a route's use case can answer, by the problem's `type`, with what each means. */
export const Conflicts = (reasons: Record<string, string>) =>
  RouteErrors(...Object.entries(reasons).map(([code, why]) => ({ status: 409, why: `${code}: ${why}` })));

/** What the route declares with RouteErrors and Conflicts. */
export const declaredErrors: ErrorRule = (op) => op.declared<ErrorReason[]>(ROUTE_ERRORS) ?? [];

export interface RequestLimits {
  /** JSON and form bodies (DESIGN.md §2). */
  bodyBytes: number;
  /** An uploaded file (MAX_UPLOAD_BYTES). */
  uploadBytes: number;
  /** How a body must keep arriving (refuseSlowBodies). */
  pace: BodyPace;
  /** How long a request's head may take (REQUEST_HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
}

/**
 * The 408 of a request whose head (request line and headers) did not arrive
 * in time: refused by the HTTP server before the request is routed
 * (answerClientErrors), so any operation may answer it, a public one too.
 */
const headTooSlow = ({ headersTimeoutMs }: RequestLimits): ErrorReason => ({
  status: 408,
  why: `HTTP.408: the request's head (request line and headers) did not arrive within ${headersTimeoutMs} ms (REQUEST_HEADERS_TIMEOUT_MS), or the whole request within Node's 5 minutes; the connection is closed`,
});

/** The 408 of a body that stopped arriving or trickled (refuseSlowBodies). */
const bodyTooSlow = ({ pace }: RequestLimits): ErrorReason => ({
  status: 408,
  why: `HTTP.408: the body stopped arriving or came too slowly (${bodyPaceRule(pace)}); nothing was changed and the connection is closed`,
});

/**
 * What the body parsers, the validation pipe and the id pipe answer: 400 for
 * input that is read and refused (a body, a query string), 404 for a path
 * naming nothing the caller sees; and the HTTP server, before any route
 * runs: 431 for headers over its limit, 408 for a head that takes too long
 * and 417 for an `Expect` other than 100-continue, on every operation.
 *
 * A body is read before any route runs, whatever the method and whether the
 * operation takes one (a read takes its parameters from a JSON or form body
 * too, README): so every operation, public ones included, answers 413 for a
 * body over its limit, 408 for one that stops arriving (refuseSlowBodies),
 * 503 and 429 for one the memory budget cannot hold (holdParsedBodies), and
 * the 415 of a body of a type not read (documentUnreadBodies).
 */
export function inputErrors(limits: RequestLimits): ErrorRule {
  return (op) => {
    const body = op.operation.requestBody;
    const query = op.readsQuery || op.parameters('query').length > 0;
    const reasons: ErrorReason[] = [HEADERS_TOO_LARGE, headTooSlow(limits), UNMET_EXPECTATION];
    reasons.push({ status: 400, why: body ? invalidBody(op) : UNNEEDED_BODY });
    if (query) reasons.push({ status: 400, why: INVALID_QUERY });
    // An operation that takes neither refuses any parameter (UnknownParametersGuard).
    if (!body && !query) reasons.push({ status: 400, why: UNKNOWN_PARAMETER });
    reasons.push(...notFound(op));
    const upload = body !== undefined && 'content' in body && 'multipart/form-data' in body.content;
    reasons.push({ status: 413, why: tooLarge(limits, upload, !body) }, bodyTooSlow(limits), UPLOAD_MEMORY_BUSY, BODY_MEMORY_SHARE);
    if (upload) reasons.push(UPLOAD_MEMORY_SHARE);
    return reasons;
  };
}

/**
 * The 431 of a request whose headers pass Node's limit: refused by the HTTP
 * server's parser before the request is routed (answerClientErrors), so any
 * operation may answer it, a public one too.
 */
export const HEADERS_TOO_LARGE: ErrorReason = {
  status: 431,
  why: `HTTP.431: the request line and headers (the URL and cookies included) are larger than ${HEADER_LIMIT} in all; the request is not read further and the connection is closed`,
};

/**
 * The 417 of a request whose `Expect` header asks for anything but
 * 100-continue: answered by the HTTP server before the request is routed
 * (answerClientErrors), so any operation may answer it, a public one too.
 */
export const UNMET_EXPECTATION: ErrorReason = {
  status: 417,
  why: 'HTTP.417: the `Expect` header asks for something other than 100-continue, the only expectation this server meets; the request is not read and the connection is closed',
};

/** The header of every answer that asks the client to come back later. */
export const RETRY_AFTER: Record<string, HeaderObject> = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } } };

/**
 * The 503 of a write that kept meeting other writes of the same rows
 * (deadlocks, serialization failures, rows held for longer than the unit
 * of work polls for them) after all its attempts: it changed nothing, and
 * may be sent again (UnitOfWork). Any write may meet one.
 */
export const WRITE_CONTENTION: ErrorReason = {
  status: 503,
  why: 'SERVICE.BUSY: other changes of the same rows kept this one from being made after all its attempts; nothing was changed, retry after `Retry-After` seconds',
  headers: RETRY_AFTER,
};

/**
 * The 503 of a request whose database statement ran past
 * DATABASE_STATEMENT_TIMEOUT_MS and was cancelled (its transaction rolled back).
 */
export const STATEMENT_TIMEOUT: ErrorReason = {
  status: 503,
  why: 'SERVICE.BUSY: a database statement of this request ran past DATABASE_STATEMENT_TIMEOUT_MS (a row held that long by another change, or a runaway query) and was cancelled; nothing was changed, retry after `Retry-After` seconds',
  headers: RETRY_AFTER,
};

/**
 * The database's busy answers: every authenticated operation reads it (the
 * credential at least) under the statement timeout, and every write (any
 * method but GET) runs in a unit of work, which may give up as WRITE_CONTENTION says.
 */
export const databaseBusyErrors: ErrorRule = (op) =>
  op.declared<boolean>(IS_PUBLIC) ? [] : [STATEMENT_TIMEOUT, ...(op.method === 'GET' ? [] : [WRITE_CONTENTION])];

/**
 * The 503 of a body (an upload, JSON, a form), or of a file URL's download,
 * that would pass what all requests may hold in memory at once
 * (UPLOAD_MEMORY_MAX_BYTES). Listed by rule on every route: any request's
 * body is held while it is read, and this covers the JSON that may name
 * file URLs.
 */
export const UPLOAD_MEMORY_BUSY: ErrorReason = {
  status: 503,
  why: 'SERVICE.BUSY: the uploads, file-URL downloads and request bodies being read hold all the memory they may (UPLOAD_MEMORY_MAX_BYTES); nothing was stored, retry after `Retry-After` seconds',
  headers: RETRY_AFTER,
};

/**
 * The 429 of an upload, or of a file URL's download, that would pass what
 * one user's requests may hold of that memory together
 * (UPLOAD_MEMORY_USER_SHARE_PERCENT). Listed by rule on multipart routes;
 * routes whose JSON may name file URLs declare it (`@RouteErrors`).
 */
export const UPLOAD_MEMORY_SHARE: ErrorReason = {
  status: 429,
  why: 'RATE.CONCURRENT_UPLOADS: this user\'s uploads and file-URL downloads in progress hold as much of that memory as one user may (UPLOAD_MEMORY_USER_SHARE_PERCENT); nothing was stored, retry after `Retry-After` seconds or once they are done',
  headers: RETRY_AFTER,
};

/**
 * The 429 of a body read before its credential is checked (JSON, a form,
 * multipart text fields) that would pass what one client address's bodies
 * may hold of that memory together (the same share as a user's). Listed by
 * rule on every route: any request's body is read so.
 */
export const BODY_MEMORY_SHARE: ErrorReason = {
  status: 429,
  why: 'RATE.CONCURRENT_BODIES: the request bodies this client address is sending hold as much of that memory as one client may (UPLOAD_MEMORY_USER_SHARE_PERCENT); nothing was read, retry after `Retry-After` seconds or once they are done',
  headers: RETRY_AFTER,
};

const INVALID_BODY_WHY =
  'the body is malformed or nested past 64 levels, a property is missing, unknown or of a bad type or value, ' +
  'text holds NUL, an unpaired surrogate or bytes that are not UTF-8, or an id in it names nothing the caller sees; `errors` names each property and why';

/**
 * A field value refused by its use case: a body not of values, a field
 * unknown to the card (or deleted while the value was written), its group
 * type's, or of a model the card is not of. A value that does not parse is INPUT.INVALID.
 */
const FIELD_VALUE_CODES = ['FIELDS.INVALID_INPUT', 'FIELDS.UNKNOWN_ATTRIBUTE', 'FIELDS.GROUP_TYPE_FIELD', 'FIELDS.ATTRIBUTE_NOT_AVAILABLE'];

/**
 * The codes of a refused body, by operationId, of the operations whose use
 * cases answer codes of several modules (a card's values, its group), which
 * no rule tells from the route's declarations: each is answered
 * (test/e2e/platform/error-responses.e2e-spec.ts provokes them, but the
 * FIELDS.UNKNOWN_ATTRIBUTE of a field deleted during the write). An
 * operation not listed says INPUT.INVALID or its module's own code.
 */
const BODY_CODES: Record<string, string[]> = {
  CardAttributesController_setMany: ['INPUT.INVALID', ...FIELD_VALUE_CODES],
  CardAttributesController_setOne: ['INPUT.INVALID', ...FIELD_VALUE_CODES],
  CardsController_create: ['INPUT.INVALID', 'CARD.INVALID_INPUT', ...FIELD_VALUE_CODES, 'GROUPING.INVALID_INPUT'],
};

function invalidBody(op: DocumentedOperation): string {
  const codes = BODY_CODES[op.operation.operationId ?? ''];
  return codes ? `${codes.join(', ')}: ${INVALID_BODY_WHY}` : `INPUT.INVALID, or the module's own code (FIELDS.INVALID_INPUT…): ${INVALID_BODY_WHY}`;
}
const UNNEEDED_BODY =
  'INPUT.INVALID: a body was sent, which this operation does not need, and it is malformed, nested past 64 levels or not UTF-8 (a JSON or form body is read first, and a read takes its parameters from it)';
const INVALID_QUERY =
  'INPUT.INVALID, or the module\'s own code (FILTER.INVALID with `position` and `expected`…): a query parameter the operation does not take, or one out of range or malformed; `errors` names it';
const UNKNOWN_PARAMETER =
  'INPUT.INVALID: the operation takes no parameters, and a query parameter (or, for a write, a body property) was sent; `errors` names each';
/**
 * The 404 code of what a path parameter names, by the segment before it and
 * the parameter (`cards/{id}`): a path whose parameter is not here fails the
 * document's build, so a new route says here what its 404 is.
 */
const NOT_FOUND_CODES: Record<string, string> = {
  'api-keys/{id}': 'IDENTITY.API_KEY_NOT_FOUND',
  'organizations/{id}': 'WORKSPACE.ORGANIZATION_NOT_FOUND',
  'members/{userId}': 'WORKSPACE.MEMBER_NOT_FOUND',
  'projects/{id}': 'WORKSPACE.PROJECT_NOT_FOUND',
  'cards/{id}': 'CARD.NOT_FOUND',
  'attributes/{id}': 'FIELDS.ATTRIBUTE_NOT_FOUND',
  'attributes/{attr}': 'FIELDS.ATTRIBUTE_NOT_FOUND',
  'models/{id}': 'FIELDS.MODEL_NOT_FOUND',
  'files/{id}': 'FIELDS.FILE_NOT_FOUND',
  'groups/{id}': 'GROUPING.GROUP_NOT_FOUND',
  'group-types/{id}': 'GROUPING.GROUP_TYPE_NOT_FOUND',
  'files/{fileId}': 'IMPORT.UPLOAD_NOT_FOUND',
};

/**
 * The 404s of the resources a path names (`type` names which), and the one
 * of an id ParseIdPipe cannot read.
 */
function notFound(op: DocumentedOperation): ErrorReason[] {
  const segments = op.path.split('/');
  const codes = segments.flatMap((segment, i) => {
    if (!/^\{\w+\}$/.test(segment)) return [];
    const code = NOT_FOUND_CODES[`${segments[i - 1]}/${segment}`];
    if (!code) throw new Error(`OpenAPI: no 404 code for ${segments[i - 1]}/${segment} of ${op.path} (NOT_FOUND_CODES)`);
    return [code];
  });
  if (!codes.length) return [];
  const reasons = [{ status: 404, why: `${[...new Set(codes)].join(', ')}: ${NOT_FOUND_WHY}` }];
  if (op.idParameters.length) reasons.push({ status: 404, why: UNREAD_ID });
  return reasons;
}

const NOT_FOUND_WHY = 'a resource named in the path does not exist or the caller may not see it (`type` says which)';
const UNREAD_ID = 'RESOURCE.NOT_FOUND: an id in the path that is not a plain positive decimal integer names nothing';

function tooLarge(limits: RequestLimits, upload: boolean, unneeded: boolean): string {
  const file = upload ? `, or the uploaded file over ${limits.uploadBytes} bytes (MAX_UPLOAD_BYTES)` : '';
  const sent = unneeded ? ' (this operation needs no body, but one sent is read)' : '';
  return `INPUT.TOO_LARGE: a JSON or form body over ${limits.bodyBytes} bytes${file}${sent}; the rest is not read`;
}
