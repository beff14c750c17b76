import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { DomainError } from './shared/domain/domain-error.js';
import { Public } from './shared/http/actor.decorator.js';

class NotReadyError extends DomainError {
  readonly code = 'SERVICE.NOT_READY';
  readonly kind = 'conflict' as const;
}

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('health')
  health() {
    return { status: 'ok' };
  }

  /** Readiness: the database answers. */
  @Public()
  @Get('ready')
  async ready() {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new NotReadyError('The database is not reachable');
    }
    return { status: 'ready' };
  }
}
