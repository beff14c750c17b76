import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { pageRequest, setPageHeaders } from '../../../shared/http/pagination.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { ProjectsService } from '../application/projects.service.js';
import { PageQueryDto } from '../../../shared/http/list-query.dto.js';
import { ProjectDto } from './dto/workspace-responses.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** A project's reads; its deletion spans the modules and lives in `cards` (ProjectsController there). */
@ApiTags('workspace')
@WorkspaceRoutes()
@Controller('projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  /** Declared before `:id`, which would otherwise take `all` for an id (and answer 404). */
  @Get('all')
  @ApiOperation({ operationId: 'ProjectsController_listVisible', summary: 'List every project the caller can see, in all their teams' })
  @ApiOkResponse({ type: [ProjectDto], description: 'the projects of all the caller\'s teams' })
  async listVisible(@CurrentActor() actor: Actor, @Query() query: PageQueryDto, @Res({ passthrough: true }) res: Response) {
    const page = pageRequest(query);
    const result = await this.projects.listVisible(actor, page);
    setPageHeaders(res, page, result.total);
    return result.items;
  }

  @Get(':id')
  @ApiOperation({ operationId: 'ProjectsController_get', summary: 'Get a project' })
  @ApiOkResponse({ type: ProjectDto, description: 'the project' })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.projects.get(id, actor);
  }
}
