import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { DomainError } from './shared/domain/domain-error.js';
import { Public } from './shared/http/actor.decorator.js';
import { RouteErrors } from './shared/http/error-responses.js';
import { DrainState } from './shared/http/draining.js';

class NotReadyError extends DomainError {
  readonly code = 'SERVICE.NOT_READY';
  readonly kind = 'unavailable' as const;
}

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly drain: DrainState,
  ) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('health')
  @ApiOkResponse({ description: 'the process answers', schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } })
  health() {
    return { status: 'ok' };
  }

  /** Readiness: not draining after SIGTERM, and the database answers; 503 otherwise. */
  @Public()
  @Get('ready')
  @ApiOkResponse({ description: 'ready to serve', schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ready'] } } } })
  @RouteErrors({ status: 503, why: 'SERVICE.NOT_READY: the server is draining after SIGTERM, or the database is not reachable' })
  async ready() {
    if (this.drain.draining) throw new NotReadyError('The server is shutting down');
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new NotReadyError('The database is not reachable');
    }
    return { status: 'ready' };
  }
}
