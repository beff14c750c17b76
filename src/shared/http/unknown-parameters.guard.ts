import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Request } from 'express';
import { invalidInput, refuseTooManyParameters } from './validation.pipe.js';

const READS = new Set(['GET', 'HEAD']);
/** Where @nestjs/swagger keeps an operation's documented parameters (@ApiQuery); its constants are not exported. */
const API_PARAMETERS = 'swagger/apiParameters';

/** What a handler reads of a request, from its parameter decorators. */
interface Reads {
  body: boolean;
  query: boolean;
  /** Given the whole request: an upload, which reads its multipart body itself. */
  whole: boolean;
  /** The query parameters the operation documents (@ApiQuery). */
  documentedQuery: ReadonlySet<string>;
}

const READS_BY_HANDLER = new WeakMap<Function, Reads>();

function readsOf(handler: Function, controller: Function): Reads {
  let reads = READS_BY_HANDLER.get(handler);
  if (!reads) {
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as Record<string, unknown>;
    const types = new Set(Object.keys(args).map((key) => Number(key.split(':')[0])));
    // A handler given the whole request (an upload reading its own parts) reads what it needs itself;
    // MultipartUpload refuses the parts it does not take, after the body is read.
    const whole = types.has(RouteParamtypes.REQUEST);
    const documented = (Reflect.getMetadata(API_PARAMETERS, handler) ?? []) as Array<{ name?: string; in?: string }>;
    reads = {
      body: whole || types.has(RouteParamtypes.BODY),
      query: whole || types.has(RouteParamtypes.QUERY),
      whole,
      documentedQuery: new Set(documented.filter((p) => p.in === 'query' && p.name).map((p) => p.name!)),
    };
    READS_BY_HANDLER.set(handler, reads);
  }
  return reads;
}

/**
 * DESIGN.md §2: an unknown parameter is a 400 naming it, never ignored. The
 * operations that declare their body or query are held to it by the
 * validation pipe (whitelist, forbidNonWhitelisted); this holds the ones
 * that declare none (a card's read, archive, deletion): before, `DELETE
 * /cards/{id}` with `{"force":true}` deleted as if nothing had been sent,
 * and `GET /cards/{id}?fields=title` answered the whole card. A write's
 * parameters are its body (the query string stands in for an unsent one,
 * queryAsBody); a read's are its query (a body sent with it stands in).
 * An upload's query string is refused too (`queryBesideUpload`).
 * A guard registered after the authentication guard (app.useGlobalGuards
 * appends to the APP_GUARDs), so an unauthenticated request is still a 401;
 * not an interceptor, which would put every request through Nest's RxJS
 * pipeline (about 9 % of an attribute set's CPU, docs/PERFORMANCE.md).
 */
@Injectable()
export class UnknownParametersGuard implements CanActivate {
  constructor(private readonly apiPrefix: string) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (context.getType() === 'http' && req.originalUrl.toLowerCase().startsWith(`/${this.apiPrefix}/`)) {
      const reads = readsOf(context.getHandler(), context.getClass());
      const read = READS.has(req.method);
      const sent = read ? (reads.query ? undefined : req.query) : reads.body ? undefined : req.body;
      const names = sent !== null && typeof sent === 'object' ? Object.keys(sent) : [];
      const misplaced = read ? [] : queryBesideUpload(req, reads);
      refuseTooManyParameters(names.length + misplaced.length);
      const problems = [
        ...names.map((field) => ({ field, message: `property ${field} should not exist` })),
        ...misplaced.map((field) => ({ field, message: 'the query string is not read beside a multipart upload (its parameters are its form parts)' })),
      ];
      if (problems.length) throw invalidInput(problems);
    }
    return true;
  }
}

/**
 * The query parameters of a multipart upload (a handler given the whole
 * request: discover, a files value's set and append) that its operation
 * does not document. DESIGN.md §2 reads the query string only when there is
 * no body, and a multipart body is one, so they would be ignored; `curl -F
 * file=@x '…/discover?project_id=1'` would seem to have been taken. Refused
 * here, before the body is read: nothing is stored and no upload memory held.
 */
function queryBesideUpload(req: Request, reads: Reads): string[] {
  if (!reads.whole || !req.is('multipart/form-data')) return [];
  return Object.keys(req.query as object).filter((name) => !reads.documentedQuery.has(name));
}
