import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { invalidInput, refuseTooManyParameters } from './validation.pipe.js';

const READS = new Set(['GET', 'HEAD']);

/** What a handler reads of a request, from its parameter decorators. */
interface Reads {
  body: boolean;
  query: boolean;
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
    reads = { body: whole || types.has(RouteParamtypes.BODY), query: whole || types.has(RouteParamtypes.QUERY) };
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
 * Runs after the guards, so an unauthenticated request is still a 401.
 */
@Injectable()
export class UnknownParametersInterceptor implements NestInterceptor {
  constructor(private readonly apiPrefix: string) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    if (context.getType() === 'http' && req.originalUrl.toLowerCase().startsWith(`/${this.apiPrefix}/`)) {
      const reads = readsOf(context.getHandler(), context.getClass());
      const read = READS.has(req.method);
      const sent = read ? (reads.query ? undefined : req.query) : reads.body ? undefined : req.body;
      const names = sent !== null && typeof sent === 'object' ? Object.keys(sent) : [];
      refuseTooManyParameters(names.length);
      if (names.length) throw invalidInput(names.map((field) => ({ field, message: `property ${field} should not exist` })));
    }
    return next.handle();
  }
}
