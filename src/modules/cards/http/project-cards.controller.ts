import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { pageRequest, setPageHeaders } from '../../../shared/http/pagination.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { CardViewsService } from '../application/card-views.service.js';
import { CreateProjectService } from '../application/create-project.service.js';
import { InvalidListingInputError } from '../domain/cards.errors.js';
import { CardListQueryDto, CreateProjectDto } from './dto/cards.dto.js';

function readBool(value: string | undefined, field: string): boolean {
  if (value === undefined || value === '') return false;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InvalidListingInputError(field, 'must be true or false');
}

/** A project's card listing. */
@ApiTags('cards')
@ApiSecurity('api_key')
@Controller('projects')
export class ProjectCardsController {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly views: CardViewsService,
  ) {}

  @Get(':id/cards')
  async list(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Query() query: CardListQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (query.filter !== undefined) throw new InvalidListingInputError('filter', 'filter expressions are not supported yet');
    const page = pageRequest(query);
    const onlyIds = readBool(query.only_ids, 'only_ids');
    const result = await this.hierarchy.listProject(id, actor, page, {
      withArchived: readBool(query.with_archived, 'with_archived'),
      onlyIds,
    });
    setPageHeaders(res, page, result.total);
    return onlyIds ? result.ids : this.views.many(result.records);
  }
}

/** Project creation: the project (workspace) with its top-level card (card-hierarchy). */
@ApiTags('workspace')
@ApiSecurity('api_key')
@Controller('organizations')
export class ProjectCreationController {
  constructor(private readonly projects: CreateProjectService) {}

  @Post(':id/projects')
  create(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: CreateProjectDto) {
    return this.projects.create(id, dto.title, actor);
  }
}
