import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ApiCreatedWithLocation, created } from '../../../shared/http/created-location.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { listingRequest, setListingHeaders } from '../../../shared/http/cursor.js';
import { jsonItems, jsonText } from '../../../shared/http/json-text.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { CardViewsService } from '../application/card-views.service.js';
import { CreateProjectService } from '../application/create-project.service.js';
import { DeleteProjectService } from '../application/delete-project.service.js';
import { CardSearchService } from '../application/card-search.service.js';
import { CardListQueryDto, CreateProjectDto } from './dto/cards.dto.js';
import { CARD_LISTING_SCHEMA, CardDto } from './dto/card-responses.dto.js';
import { ProjectDto } from '../../workspace/index.js';
import { listingScope, readFilter, readListingOptions } from './listing-params.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** A project's card listing. */
@ApiTags('cards')
@ApiExtraModels(CardDto)
@WorkspaceRoutes()
@Controller('projects')
export class ProjectCardsController {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly views: CardViewsService,
    private readonly search: CardSearchService,
  ) {}

  @Get(':id/cards')
  @ApiOperation({ operationId: 'ProjectCardsController_list', summary: "List a project's cards" })
  @ApiOkResponse({ schema: CARD_LISTING_SCHEMA, description: "the project's cards across the whole hierarchy, the top-level card left out (with only_ids=true, their ids)" })
  async list(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Query() query: CardListQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const options = readListingOptions(query);
    const filter = readFilter(query);
    // A cursor belongs to one listing: this project, with or without the archived cards, and the filter.
    const scope = listingScope(`projects/${id}/cards`, options, filter);
    const page = listingRequest(query, scope);
    if (filter) {
      const found = await this.search.inProject(id, filter, page, options, actor);
      setListingHeaders(res, page, found, scope);
      return jsonItems(res, found.items);
    }
    // The card JSON needs the project's field definitions: read in the page's statement.
    const alsoRead = options.onlyIds ? undefined : this.views.readAlong('$1');
    const result = await this.hierarchy.listProject(id, actor, page, { ...options, alsoRead });
    setListingHeaders(res, page, result, scope);
    return options.onlyIds ? result.ids : jsonText(res, await this.views.manyJson(result.cards, result.read.fields));
  }
}

/** Project creation: the project (workspace) with its top-level card (card-hierarchy). */
@ApiTags('workspace')
@WorkspaceRoutes()
@Controller('organizations')
export class ProjectCreationController {
  constructor(private readonly projects: CreateProjectService) {}

  @Post(':id/projects')
  @ApiOperation({ operationId: 'ProjectCreationController_create', summary: 'Create a project in a team' })
  @ApiCreatedWithLocation({ type: ProjectDto, description: 'the new project, with its top-level card' })
  async create(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateProjectDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/projects/', await this.projects.create(id, dto.title, actor));
  }
}

/**
 * Project deletion: the project (workspace) with the cards of other
 * projects that lose relationship values naming its cards (DeleteProjectService).
 * Its OpenAPI operationId is explicit (`ProjectsController_delete`, from
 * when the route was workspace's), which clients generated from the
 * document name their calls by.
 */
@ApiTags('workspace')
@WorkspaceRoutes()
@Controller('projects')
export class ProjectsController {
  constructor(private readonly projects: DeleteProjectService) {}

  @DeletionRoute(':id', 'the project, its cards, fields and groups are gone')
  @ApiOperation({ operationId: 'ProjectsController_delete', summary: 'Delete a project with its cards, fields and groups' })
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.projects.delete(id, actor);
    return deleted(id);
  }
}
