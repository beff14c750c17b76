import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import type { Observable } from 'rxjs';
import { whileClientWaits } from '../persistence/request-cancellation.js';

/**
 * Runs every handler with a signal that aborts when its client closes the
 * connection before the answer went out: the handler's statements are then
 * cancelled (persistence/request-cancellation.ts). A response that ended is
 * not a client that left: 'close' follows 'finish' on every response.
 * Applied to every route (SharedModule, APP_INTERCEPTOR); the handler runs
 * inside `next.handle()`, whose callback Nest binds to the context it is
 * called in, so the whole handler sees the signal.
 */
@Injectable()
export class ClientGoneInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const res = context.switchToHttp().getResponse<Response>();
    const gone = new AbortController();
    if (res.destroyed && !res.writableFinished) gone.abort();
    else res.once('close', () => res.writableFinished || gone.abort());
    return whileClientWaits(gone.signal, () => next.handle());
  }
}
