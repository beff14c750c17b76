import { Controller, Get, Param } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { ProjectsService } from '../application/projects.service.js';

@ApiTags('workspace')
@ApiSecurity('api_key')
@Controller('projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Get(':id')
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.projects.get(id, actor);
  }

  @DeletionRoute(':id', 'the project, its cards, fields and groups are gone')
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.projects.delete(id, actor);
    return deleted(id);
  }
}
