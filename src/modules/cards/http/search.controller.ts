import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { listingRequest, setListingHeaders } from '../../../shared/http/cursor.js';
import { jsonItems } from '../../../shared/http/json-text.js';
import { CardSearchService } from '../application/card-search.service.js';
import { SearchQueryDto } from './dto/cards.dto.js';
import { CARD_LISTING_SCHEMA, CardDto } from './dto/card-responses.dto.js';
import { listingScope, readFilter, readListingOptions } from './listing-params.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** GET /search: cards matching a filter in every project the caller can see, in every team. */
@ApiTags('cards')
@ApiExtraModels(CardDto)
@WorkspaceRoutes()
@Controller('search')
export class SearchController {
  constructor(private readonly search: CardSearchService) {}

  @Get()
  @ApiOperation({ operationId: 'SearchController_find', summary: 'Search the cards of every project the caller can see' })
  @ApiOkResponse({ schema: CARD_LISTING_SCHEMA, description: 'the matching cards of every project the caller sees (with only_ids=true, their ids)' })
  async find(@CurrentActor() actor: Actor, @Query() query: SearchQueryDto, @Res({ passthrough: true }) res: Response) {
    const filter = readFilter(query) ?? { text: '', parameter: 'filter' };
    const options = readListingOptions(query);
    // The same cursors as the project listing, scoped to the search and its filter.
    const scope = listingScope('search', options, filter);
    const page = listingRequest(query, scope);
    const found = await this.search.everywhere(filter, page, options, actor);
    setListingHeaders(res, page, found, scope);
    return jsonItems(res, found.items);
  }
}
