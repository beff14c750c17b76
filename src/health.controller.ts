import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DatabaseReadiness } from './database/readiness.js';
import { DomainError } from './shared/domain/domain-error.js';
import { Public } from './shared/http/actor.decorator.js';
import { RETRY_AFTER, RouteErrors } from './shared/http/error-responses.js';
import { DrainState } from './shared/http/draining.js';
import { DATABASE_RETRY_AFTER_SECONDS } from './shared/persistence/database-availability.js';

class NotReadyError extends DomainError {
  readonly code = 'SERVICE.NOT_READY';
  readonly kind = 'unavailable' as const;
}

/** The 503 of /ready; the problem filter keeps the header set here. */
function notReady(res: Response, message: string): NotReadyError {
  res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
  return new NotReadyError(message);
}

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    private readonly database: DatabaseReadiness,
    private readonly drain: DrainState,
  ) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('health')
  @ApiOperation({ operationId: 'HealthController_health', summary: 'Check that the server is alive' })
  @ApiOkResponse({ description: 'the process answers', schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } })
  health() {
    return { status: 'ok' };
  }

  /**
   * Readiness: not draining after SIGTERM, and the database answers within
   * 2 s and takes writes (DatabaseReadiness); 503 otherwise, with the
   * `Retry-After` the API's 503s send while the database is away (a draining
   * instance is gone by then; behind a load balancer the retry reaches
   * another). A pool whose every connection is lent is still ready.
   */
  @Public()
  @Get('ready')
  @ApiOperation({ operationId: 'HealthController_ready', summary: 'Check that the server is ready to serve' })
  @ApiOkResponse({ description: 'ready to serve', schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ready'] } } } })
  @RouteErrors({
    status: 503,
    why: `SERVICE.NOT_READY: the server is draining after SIGTERM, or the database is not reachable, does not answer within 2 s, or is read-only; retry after \`Retry-After\` seconds (${DATABASE_RETRY_AFTER_SECONDS})`,
    headers: RETRY_AFTER,
  })
  async ready(@Res({ passthrough: true }) res: Response) {
    if (this.drain.draining) throw notReady(res, 'The server is shutting down');
    const unready = await this.database.unready();
    if (unready) throw notReady(res, unready);
    return { status: 'ready' };
  }
}
